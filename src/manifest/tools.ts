/**
 * The skill tools a language model uses to reach document skills, as a code skill named
 * `skills` whose actions — and therefore whose LLM tools, through `toolsForAgent` — are:
 *
 * - `load_skill`: activates a skill by mounting it on the agent (`result(..., { replace: [spec] })`:
 *   `cmd` applies the mount and emits one `register_action` per toolset action), and returns its
 *   body without front matter, wrapped in `<skill_content>`, its root path and its resources.
 *   Loading a mounted skill again mounts nothing and returns the body again; when the skill has
 *   changed on disk since (the registry reloaded it), the new version takes the old one's place.
 *   An unknown name fails with the list of available skills.
 * - `list_skills`: the enabled skills with their brief descriptions.
 * - `read_skill_resource`: one file of a skill, by relative path (see `resources.ts` for what is
 *   refused).
 *
 * I/O: through the registry only.
 */
import { z } from 'zod';
import { defineAction, fail, result } from '../core/action.js';
import { defineSkill, type AnySkill } from '../core/skill.js';
import { ManifestError } from './errors.js';
import { wrapBody } from './escape.js';
import type { DocumentSkillRegistry } from './registry.js';
import { readSkillResource } from './resources.js';
import { untrustedNotice } from './trust.js';

export interface SkillToolsOptions {
  /** The code skill's name (default `skills`). */
  name?: string;
  /** Largest resource returned as text, in bytes (default 256 KiB); longer ones are cut and marked. */
  maxResourceBytes?: number;
  /** Restrict `load_skill`'s parameter to an enum of the names registered now (default: a validated string). */
  nameEnum?: boolean;
}

/** What `load_skill` returns. */
export interface LoadSkillOutput {
  skill: string;
  version: string | undefined;
  rootPath: string | undefined;
  /** The body, without front matter, inside `<skill_content name="...">`. */
  instructions: string;
  resources: string[];
  /** Actions the skill brought (now registered on the agent). */
  tools: string[];
  /** The skill was already mounted: nothing was mounted again. */
  alreadyLoaded: boolean;
  /** False for a project skill not yet trusted: it brought no tools and its scripts will not run. */
  trusted: boolean;
  /** Why the skill's tools are missing, for the model, when it is not trusted. */
  notice?: string;
}

function failure(error: unknown) {
  if (error instanceof ManifestError) return fail(error.code, error.message, error.details);
  throw error;
}

/** Creates the `skills` code skill over a registry: mount it on an agent to offer the tools. */
export function createSkillTools(registry: DocumentSkillRegistry, options: SkillToolsOptions = {}): AnySkill {
  const names = registry.names();
  const nameSchema =
    options.nameEnum && names.length ? z.enum(names as [string, ...string[]]) : z.string().min(1).max(64);
  const known = () => registry.entries().map((entry) => entry.name);

  const loadSkill = defineAction({
    name: 'load_skill',
    description: 'Load a skill by name: returns its instructions, its root path and its files, and makes its tools available.',
    input: z.object({ name: nameSchema.describe('The skill to load, as listed in the skill catalog or by list_skills') }),
    run: async ({ name }, ctx) => {
      if (!registry.has(name)) {
        return fail('unknown_skill', `no skill named '${name}'; available skills: ${known().join(', ') || '(none)'}`, { available: known() });
      }
      try {
        const { spec, entry, loaded } = await registry.activate(name);
        const output: LoadSkillOutput = {
          skill: name,
          version: entry.version,
          rootPath: entry.rootPath,
          instructions: wrapBody(name, loaded.instructions),
          resources: [...loaded.resources.keys()],
          tools: spec.actions.map((action) => action.name),
          alreadyLoaded: Object.hasOwn(ctx.state, spec.stateKey),
          trusted: entry.trusted,
        };
        if (!entry.trusted) output.notice = untrustedNotice(entry);
        // `replace`: mounts the skill, or puts a reloaded version in place of the mounted one.
        return result(output, { replace: [spec] });
      } catch (error) {
        return failure(error);
      }
    },
  });

  const listSkills = defineAction({
    name: 'list_skills',
    description: 'List the skills that can be loaded, with a one-line description of each.',
    input: z.object({}),
    run: () => {
      const skills = registry.entries().map((entry) => ({
        name: entry.name,
        description: entry.briefDescription,
        version: entry.version,
        source: entry.source,
        ...(entry.trusted ? {} : { trusted: false }),
      }));
      return { count: skills.length, skills };
    },
  });

  const readResource = defineAction({
    name: 'read_skill_resource',
    description: "Read one file of a skill by its path relative to the skill's root (e.g. reference.md or scripts/run.py).",
    input: z.object({
      skill: z.string().min(1).max(64).describe('The skill the file belongs to'),
      path: z.string().min(1).max(1024).describe("The file's path relative to the skill's root"),
    }),
    run: async ({ skill, path }) => {
      if (!registry.has(skill)) {
        return fail('unknown_skill', `no skill named '${skill}'; available skills: ${known().join(', ') || '(none)'}`, { available: known() });
      }
      try {
        const loaded = await registry.content(skill);
        const content = await readSkillResource(skill, loaded, path, { maxBytes: options.maxResourceBytes });
        return {
          skill,
          path: content.path,
          size: content.size,
          binary: content.binary,
          truncated: content.truncated,
          content: content.binary ? `[binary file of ${content.size ?? 'unknown'} bytes: not shown]` : content.text,
        };
      } catch (error) {
        return failure(error);
      }
    },
  });

  return defineSkill({
    name: options.name ?? 'skills',
    description: 'Find, load and read document skills (SKILL.md folders).',
    category: 'skills',
    tags: ['skills', 'document'],
    actions: [loadSkill, listSkills, readResource],
    instructions: 'Call list_skills to see the skills, load_skill to activate one, read_skill_resource to read its files.',
  });
}
