/**
 * The application's half of steering from the studio: describing the agents of a system (their
 * skills, actions with input schemas, routes, what may be mounted and from where) and carrying
 * out a page's command on them. Each command does what the same call on the agent's ref does,
 * with the same typed errors: nothing here bypasses the runtime (a mount only loads first a skill
 * of the definition's own document registry, which the runtime asks by name only).
 */
import { catalogOf } from '../core/agent-value.js';
import { errorInfo, toErrorInfo } from '../core/errors.js';
import { inputJsonSchema } from '../core/toolset.js';
import type { SkillResolver } from '../core/skill-registry.js';
import type { AnySkill } from '../core/skill.js';
import type { DescribedAgent, MountableSkill, SteerAnswer, SteerCommand } from '../viewer/steering.js';
import type { AgentRef } from './agent-ref.js';
import { resolversOf, type AgentSystem } from './system.js';

/** A route's target as a page shows it: the action it runs, or that code decides. */
function targetOf(target: unknown): unknown {
  if (typeof target === 'function') return 'a function of the signal';
  if (target && typeof target === 'object' && 'action' in target) {
    const { action, skill } = target as { action: unknown; skill?: unknown };
    return { action: typeof action === 'string' ? action : (action as { name?: string }).name, ...(typeof skill === 'string' ? { skill } : {}) };
  }
  return target;
}

/** A registry of document skills (or MCP skills) as far as the studio reads it: its entries, each with the disclosure text. */
interface EntryRegistry {
  entries(): readonly { name: string; briefDescription: string; source: string }[];
}

/** A registry of code skills (`createSkillRegistry`) as far as the studio reads it. */
interface ListRegistry {
  list(): readonly AnySkill[];
}

const hasEntries = (resolver: unknown): resolver is EntryRegistry => typeof (resolver as Partial<EntryRegistry> | undefined)?.entries === 'function';
const hasList = (resolver: unknown): resolver is ListRegistry => typeof (resolver as Partial<ListRegistry> | undefined)?.list === 'function';

/**
 * The skills `resolver` can give by name, as the page lists them: a document registry's entries
 * (the text a model is disclosed, and whether they came over MCP), a code registry's skills; a
 * resolver that can only be asked by name lists nothing.
 */
function skillsOf(resolver: SkillResolver | undefined): MountableSkill[] {
  if (hasEntries(resolver)) return resolver.entries().map((entry) => ({ name: entry.name, description: entry.briefDescription, from: entry.source === 'mcp' ? 'mcp' : 'documents' }));
  if (hasList(resolver)) return resolver.list().map((skill) => ({ name: skill.name, description: skill.description ?? '', from: 'registry' }));
  return [];
}

/**
 * What may be mounted on an agent by name, in the order a mount looks names up (the definition's
 * skills, its registry, the system's skills, the system's resolvers): the first place a name is
 * found is where it comes from. The skills mounted already are left out.
 */
function mountableOf(blueprint: { skills: readonly AnySkill[]; registry: SkillResolver | undefined }, system: AgentSystem | undefined, mounted: readonly string[]): MountableSkill[] {
  const found = new Map<string, MountableSkill>();
  const candidates = [
    ...blueprint.skills.map((skill): MountableSkill => ({ name: skill.name, description: skill.description ?? '', from: 'definition' })),
    ...skillsOf(blueprint.registry),
    ...(system ? [system.skills, ...resolversOf(system)].flatMap(skillsOf) : []),
  ];
  for (const skill of candidates) if (!found.has(skill.name) && !mounted.includes(skill.name)) found.set(skill.name, skill);
  return [...found.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * One running agent: its status, its mounted skills, every action it can run with its input
 * schema, its routes, and what may be mounted on it (with `system`, the system's skills and
 * resolvers too). A passivated agent is described by its status only, without waking it: what
 * it has mounted is in the store until its next use.
 */
export function describeAgent(ref: AgentRef, system?: AgentSystem): DescribedAgent {
  if (ref.status === 'passivated') return { id: ref.id, definition: ref.definition, status: 'passivated', mounted: [], actions: [], routes: [], mountable: [] };
  const view = ref.getSnapshot();
  const catalog = catalogOf(view.agent);
  const described: DescribedAgent = { id: ref.id, definition: ref.definition, status: view.status, mounted: view.mounted.map((skill) => skill.name), actions: [], routes: [], mountable: [] };
  if (!catalog) return described;
  for (const entries of catalog.actions.values()) {
    for (const { action, skill } of entries) {
      described.actions.push({ name: action.name, description: action.description ?? '', ...(skill ? { skill: skill.spec.name } : {}), input: inputJsonSchema(action) });
    }
  }
  for (const route of catalog.blueprint.routes) described.routes.push({ path: route.path, target: targetOf(route.target) });
  for (const active of catalog.skills.values()) {
    for (const route of active.spec.routes(active.config)) described.routes.push({ path: route.path, skill: active.spec.name, target: targetOf(route.target) });
  }
  described.mountable = mountableOf(catalog.blueprint, system, described.mounted);
  return described;
}

/**
 * A skill of the definition's own registry that has not been loaded yet is loaded before it is
 * mounted by name (the system loads the skills of its own resolvers itself; a definition's
 * registry it only asks by name).
 */
async function loadFromDefinition(ref: AgentRef, name: string): Promise<void> {
  const registry = catalogOf(ref.getSnapshot().agent)?.blueprint.registry as (SkillResolver & { has?(name: string): boolean; load?(names: string[]): Promise<unknown> }) | undefined;
  if (!registry || registry.get(name) || typeof registry.load !== 'function' || registry.has?.(name) !== true) return;
  await registry.load([name]);
}

/** What the page gets back: plain JSON (an answer that cannot be encoded is said to be so). */
function plain(value: unknown): unknown {
  if (value === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch (error) {
    return `[not JSON: ${error instanceof Error ? error.message : String(error)}]`;
  }
}

/** Carries out a page's command on `system`; never throws: a failure is an answer with its typed error. */
export async function carryOut(system: AgentSystem, command: SteerCommand): Promise<SteerAnswer> {
  try {
    if (command.op === 'describe') return { ok: true, value: system.list().map((ref) => describeAgent(ref, system)) };
    const ref = system.get(command.agent);
    if (!ref) return { ok: false, error: { ...errorInfo('unknown_agent', `no running agent '${command.agent}' (running: ${system.list().map((one) => one.id).join(', ') || 'none'})`) } };
    switch (command.op) {
      case 'send':
        ref.send(command.signal);
        return { ok: true, value: null };
      case 'call':
        return { ok: true, value: plain(await ref.call(command.signal)) };
      case 'run':
        return { ok: true, value: plain(await ref.run({ action: command.action, params: command.params, ...(command.skill ? { skill: command.skill } : {}) })) };
      case 'mount':
        await loadFromDefinition(ref, command.skill);
        return { ok: true, value: plain(await ref.mount(command.skill)) };
      case 'unmount':
        return { ok: true, value: plain(await ref.unmount(command.skill)) };
      case 'stop':
        await ref.stop();
        return { ok: true, value: null };
    }
  } catch (error) {
    return { ok: false, error: { ...toErrorInfo(error, 'signal_failed') } };
  }
}
