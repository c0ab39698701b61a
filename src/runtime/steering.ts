/**
 * The application's half of steering from the studio: describing the agents of a system (their
 * skills, actions with input schemas, routes, what may be mounted) and carrying out a page's
 * command on them. Each command does what the same call on the agent's ref does, with the same
 * typed errors: nothing here bypasses the runtime.
 */
import { catalogOf } from '../core/agent-value.js';
import { errorInfo, toErrorInfo } from '../core/errors.js';
import { inputJsonSchema } from '../core/toolset.js';
import type { DescribedAgent, SteerAnswer, SteerCommand } from '../viewer/steering.js';
import type { AgentRef } from './agent-ref.js';
import type { AgentSystem } from './system.js';

/** A route's target as a page shows it: the action it runs, or that code decides. */
function targetOf(target: unknown): unknown {
  if (typeof target === 'function') return 'a function of the signal';
  if (target && typeof target === 'object' && 'action' in target) {
    const { action, skill } = target as { action: unknown; skill?: unknown };
    return { action: typeof action === 'string' ? action : (action as { name?: string }).name, ...(typeof skill === 'string' ? { skill } : {}) };
  }
  return target;
}

/** One running agent: its mounted skills, every action it can run with its input schema, its routes (a passivated one: its status only). */
export function describeAgent(ref: AgentRef): DescribedAgent {
  // Described without waking it: what it has mounted is in the store until its next use.
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
  const registry = catalog.blueprint.registry as { names?: () => string[] } | undefined;
  const names = new Set([...catalog.blueprint.skills.map((skill) => skill.name), ...(typeof registry?.names === 'function' ? registry.names() : [])]);
  described.mountable = [...names].filter((name) => !described.mounted.includes(name)).sort();
  return described;
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
    if (command.op === 'describe') return { ok: true, value: system.list().map(describeAgent) };
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
