/**
 * The system prompt of one model call, rebuilt from the agent's state every step, never from the
 * history: the agent's instructions, each active code skill's `instructions`, the disclosure of
 * document skills for the turn's user message, and the bodies of the document skills loaded on
 * the agent. A skill loaded early in a long conversation stays in force after the history is
 * compacted, and a skill unmounted stops being described at the next step.
 *
 * The tools are the agent's (`ref.toolset()`), recomputed from its active skills the same way.
 */
import type { Agent } from '../core/agent-value.js';
import { catalogOf } from '../core/agent-value.js';
import type { Diagnostic } from '../core/diagnostics.js';
import { disclose, type DiscloseOptions } from '../manifest/disclose.js';
import type { DocumentSkillRegistry } from '../manifest/document-registry.js';
import { wrapBody } from '../manifest/escape.js';
import { skillToolsRegistry } from '../manifest/skill-tools.js';
import { documentMetadata } from '../manifest/spec.js';
import type { ConversationSettings } from './conversation.js';

/** A built system prompt and what went into it. */
export interface SystemPrompt {
  text: string;
  /** Code skills whose instructions are in it, in mount order. */
  skills: string[];
  /** Document skills whose bodies are in it (loaded, or shown in full by the disclosure). */
  documents: string[];
  /** Document skills the disclosure's catalog names. */
  catalog: string[];
  diagnostics: Diagnostic[];
}

/** The disclosure of one turn, kept while the registry and the loaded skills are unchanged. */
interface CachedDisclosure {
  key: string;
  text: string;
  detailed: string[];
  catalog: string[];
  diagnostics: Diagnostic[];
}

/** Caches the disclosure per agent: within a turn the query is the same at every step. */
export class PromptCache {
  private readonly byAgent = new Map<string, CachedDisclosure>();

  get(agent: string, key: string): CachedDisclosure | undefined {
    const cached = this.byAgent.get(agent);
    return cached?.key === key ? cached : undefined;
  }

  set(agent: string, value: CachedDisclosure): void {
    this.byAgent.set(agent, value);
  }

  forget(agent: string): void {
    this.byAgent.delete(agent);
  }
}

/**
 * The registry whose skills the agent can load: the one behind its skill tools (`load_skill`),
 * else `fallback` when the agent offers a `load_skill` of another make. None: nothing to disclose.
 */
function loadableRegistry(agent: Agent<object>, fallback: DocumentSkillRegistry | undefined): DocumentSkillRegistry | undefined {
  const catalog = catalogOf(agent);
  if (!catalog) return undefined;
  let found = loadable.get(catalog);
  if (found === undefined) {
    found = null;
    for (const active of catalog.skills.values()) {
      const registry = skillToolsRegistry(active.spec);
      if (registry) {
        found = registry;
        break;
      }
      if (active.spec.actions.some((action) => action.name === 'load_skill')) found = 'other';
    }
    loadable.set(catalog, found);
  }
  return found === 'other' ? fallback : (found ?? undefined);
}

/** Per catalog (agents of one definition and skill set share it): the registry behind its `load_skill`, another make of it, or none. */
const loadable = new WeakMap<object, DocumentSkillRegistry | 'other' | null>();

/**
 * Builds the system prompt for the next model call of `agent`'s turn about `query`. The skills
 * disclosed are those of the registry behind the agent's `load_skill` (`documents` when that
 * tool is of another make); an agent without `load_skill` gets no disclosure.
 */
export async function buildSystemPrompt(
  agent: Agent<object>,
  settings: ConversationSettings,
  query: string,
  documents: DocumentSkillRegistry | undefined,
  cache: PromptCache | undefined,
): Promise<SystemPrompt> {
  const catalog = catalogOf(agent);
  const parts: string[] = [];
  if (settings.instructions.trim()) parts.push(settings.instructions.trim());
  const skills: string[] = [];
  const loaded: { name: string; body: string }[] = [];
  for (const record of agent.mounted) {
    const spec = catalog?.skills.get(record.name)?.spec;
    if (!spec?.instructions?.trim()) continue;
    if (documentMetadata(spec)) loaded.push({ name: spec.name, body: spec.instructions });
    else {
      skills.push(spec.name);
      parts.push(`<skill name="${spec.name}">\n${spec.instructions.trim()}\n</skill>`);
    }
  }

  let disclosed: CachedDisclosure | undefined;
  const registry = loadableRegistry(agent, documents);
  if (registry) {
    const documents = registry;
    const loadedNames = loaded.map((skill) => skill.name);
    const key = `${documents.revision}\u0000${loadedNames.join('\u0000')}\u0000${query}`;
    disclosed = cache?.get(agent.id, key);
    if (!disclosed) {
      const options: DiscloseOptions = {};
      const d = settings.disclosure;
      if (d.maxSkills !== undefined) options.maxSkills = d.maxSkills;
      if (d.preload !== undefined) options.preload = d.preload;
      if (d.enable !== undefined) options.enable = d.enable;
      if (d.catalogTokens !== undefined) options.catalogBudget = { tokens: d.catalogTokens };
      const disclosure = await disclose(documents, query, options);
      disclosed = { key, text: disclosure.text, detailed: disclosure.detailed, catalog: disclosure.catalog, diagnostics: disclosure.diagnostics };
      cache?.set(agent.id, disclosed);
    }
    if (disclosed.text) parts.push(disclosed.text);
  }

  const documentsShown = [...(disclosed?.detailed ?? [])];
  const bodies: string[] = [];
  for (const skill of loaded) {
    // A skill the disclosure already shows in full is not repeated.
    if (documentsShown.includes(skill.name)) continue;
    documentsShown.push(skill.name);
    bodies.push(wrapBody(skill.name, skill.body));
  }
  if (bodies.length) parts.push(`## Loaded skills\n\nFollow the instructions of these skills where they apply.\n\n${bodies.join('\n\n')}`);

  return {
    text: parts.join('\n\n'),
    skills,
    documents: documentsShown,
    catalog: disclosed?.catalog ?? [],
    diagnostics: disclosed?.diagnostics ?? [],
  };
}
