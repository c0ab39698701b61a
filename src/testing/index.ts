/**
 * Model-based testing of agent definitions (`skillstate/testing`), with `xstate/graph`.
 *
 * `createAgentTestModel(definition, options)` builds an abstract model of an agent: one state
 * per set of optional skills that can be mounted together (requirements respected), with
 * events to mount and unmount each of them, to send each named signal and to inject each named
 * fault. `xstate/graph` walks that model (shortest paths, simple paths); `run(path)` replays a
 * path against a real agent in a fresh system and, after every step, checks the invariants of
 * `checkAgentInvariants` (listed in docs/architecture.md):
 *
 * - the registered actions equal the union of the active skills' actions (plus the agent's own);
 * - a skill's state slice exists iff the skill is mounted;
 * - a lifecycle child is active (or failed) iff its skill is mounted, inactive or absent otherwise;
 * - a skill's children run iff its lifecycle is active;
 * - the agent still answers;
 * - the mounted skills are the ones the model expects.
 */
import type { AnyActorRef } from 'xstate';
import { createMachine } from 'xstate';
import { createTestModel, type TestModel } from 'xstate/graph';
import type { AgentDefinition } from '../core/agent-definition.js';
import { catalogOf } from '../core/agent-value.js';
import { DefinitionError } from '../core/errors.js';
import { createSignal, type Signal, type SignalLike } from '../core/signal.js';
import type { AnySkill } from '../core/skill.js';
import type { AgentRef } from '../runtime/agent-ref.js';
import { RuntimeError } from '../runtime/errors.js';
import { createAgentSystem, type AgentSystem } from '../runtime/system.js';
import type { AgentSystemOptions } from '../runtime/system-runtime.js';
import { lifecycleId } from '../../machines/agent.js';

/** A signal the model may send in any state, and what its answer must satisfy. */
export interface ModelSignal {
  signal: Signal | SignalLike | string;
  /** Called with the result, or the `RuntimeError`, in the state the model is in; throw to fail the step. */
  expect?: (outcome: { ok: true; value: unknown } | { ok: false; error: RuntimeError }, mounted: readonly string[]) => void;
}

/** Options of `createAgentTestModel`. */
export interface AgentModelOptions {
  /** Skills the model mounts and unmounts (the definition's own skills stay mounted). */
  skills?: readonly AnySkill[];
  /** Signals to send, by event name. */
  signals?: Record<string, ModelSignal>;
  /** Faults to inject, by event name (crash a child, send poison...). The invariants must hold after each. */
  faults?: Record<string, (agent: AgentRef<object>, system: AgentSystem) => unknown | Promise<unknown>>;
  /** Options of the system each path runs in. */
  system?: AgentSystemOptions;
  /** A signal that must always be answered (with a result or a typed error) within `probeTimeout`. Default: an unrouted probe. */
  probe?: Signal | SignalLike | string;
  probeTimeout?: number;
}

/** An event of the test model. */
export type ModelEvent = { type: string };

/** A model of an agent for model-based testing, made by `createAgentTestModel`. */
export interface AgentTestModel {
  /** The abstract model, an XState machine (inspect it, draw it). */
  readonly machine: ReturnType<typeof createMachine>;
  readonly model: TestModel<ReturnType<ReturnType<typeof createMachine>['getInitialSnapshot']>, ModelEvent, unknown>;
  /** Shortest paths to every model state (xstate/graph), each path extended by every signal and fault once. */
  shortestPaths(): ModelPath[];
  /**
   * Paths that never revisit a skill set, depth first, at most `max` of them (default 200).
   * Their number grows exponentially with the optional skills; the cap keeps it usable.
   */
  simplePaths(options?: { max?: number }): ModelPath[];
  /** Replays a path against a real agent, checking the invariants after each step. Throws on the first violation. */
  run(path: ModelPath): Promise<void>;
}

/** One path through the test model: its description, its events in order, and the skills mounted at its end. */
export interface ModelPath {
  description: string;
  /** The events of the path, in order. */
  events: ModelEvent[];
  /** The mounted optional skills expected at the end. */
  mounted: string[];
}

const SEPARATOR = '+';

function stateKey(mounted: readonly string[]): string {
  return mounted.length ? [...mounted].sort().join(SEPARATOR) : 'none';
}

function mountedOf(key: string): string[] {
  return key === 'none' ? [] : key.split(SEPARATOR);
}

/** Builds the abstract model of an agent definition. */
export function createAgentTestModel(definition: AgentDefinition<object>, options: AgentModelOptions = {}): AgentTestModel {
  const optional = [...(options.skills ?? [])];
  const staticNames = new Set(definition.skills().map((skill) => skill.name));
  // The model keeps the definition's own skills mounted; one listed as optional too would be
  // expected to come and go, and every path would report a violation that is not there.
  const both = optional.find((skill) => staticNames.has(skill.name));
  if (both) {
    throw new DefinitionError({
      code: 'invalid_skill',
      message: `skill '${both.name}' is one of the skills of agent '${definition.name}', which the model keeps mounted; list only optional skills in skills`,
      skill: both.name,
    });
  }
  const byName = new Map(optional.map((skill) => [skill.name, skill]));
  const signals = options.signals ?? {};
  const faults = options.faults ?? {};

  // Reachable sets of mounted optional skills, breadth first.
  const states: Record<string, { on: Record<string, string> }> = {};
  const queue: string[][] = [[]];
  while (queue.length) {
    const mounted = queue.shift()!;
    const key = stateKey(mounted);
    if (states[key]) continue;
    const on: Record<string, string> = {};
    const present = new Set([...mounted, ...staticNames]);
    for (const skill of optional) {
      if (mounted.includes(skill.name)) {
        const required = optional.some((other) => mounted.includes(other.name) && other.requires.includes(skill.name));
        if (!required) {
          const next = mounted.filter((name) => name !== skill.name);
          on[`unmount.${skill.name}`] = stateKey(next);
          queue.push(next);
        }
      } else if (skill.requires.every((name) => present.has(name))) {
        const next = [...mounted, skill.name];
        on[`mount.${skill.name}`] = stateKey(next);
        queue.push(next);
      }
    }
    for (const name of Object.keys(signals)) on[`signal.${name}`] = key;
    for (const name of Object.keys(faults)) on[`fault.${name}`] = key;
    states[key] = { on };
  }
  const machine = createMachine({
    id: `${definition.name}.model`,
    initial: 'none',
    states: Object.fromEntries(Object.entries(states).map(([key, state]) => [key, { on: Object.fromEntries(Object.entries(state.on).map(([event, target]) => [event, { target }])) }])),
  });
  const model = createTestModel(machine) as unknown as AgentTestModel['model'];

  const toPaths = (paths: ReturnType<typeof model.getShortestPaths>): ModelPath[] =>
    paths.map((path) => {
      const events = path.steps.map((step) => step.event).filter((event) => !event.type.startsWith('xstate.') && !selfEvent(event.type));
      return { description: events.length ? events.map((event) => event.type).join(' → ') : '(initial state)', events, mounted: mountedOf(String(path.state.value)) };
    });
  const selfEvent = (type: string) => type.startsWith('signal.') || type.startsWith('fault.');

  const selfEvents = [...Object.keys(signals).map((name) => `signal.${name}`), ...Object.keys(faults).map((name) => `fault.${name}`)];
  /** A path ending in `state`, followed by every signal and fault once (they do not change the skill set). */
  const exercised = (path: ModelPath): ModelPath => {
    if (!selfEvents.length) return path;
    const events = [...path.events, ...selfEvents.map((type) => ({ type }))];
    return { ...path, events, description: events.map((event) => event.type).join(' → ') };
  };

  const simplePaths = (max: number): ModelPath[] => {
    const found: ModelPath[] = [];
    const walk = (key: string, events: ModelEvent[], visited: Set<string>) => {
      if (found.length >= max) return;
      let extended = false;
      for (const [event, target] of Object.entries(states[key]!.on)) {
        if (target === key || visited.has(target) || found.length >= max) continue;
        extended = true;
        visited.add(target);
        walk(target, [...events, { type: event }], visited);
        visited.delete(target);
      }
      if (!extended && events.length) {
        found.push(exercised({ description: '', events, mounted: mountedOf(key) }));
      }
    };
    walk('none', [], new Set(['none']));
    return found;
  };

  return {
    machine,
    model,
    shortestPaths: () => toPaths(model.getShortestPaths()).map(exercised),
    simplePaths: (options = {}) => simplePaths(options.max ?? 200),
    async run(path) {
      const system = createAgentSystem({ onUnhandledError: () => {}, onUnhandledDiagnostic: () => {}, ...options.system });
      const agent = system.spawn(definition as AgentDefinition<object>);
      const expected = new Set<string>();
      try {
        await assertStep(agent, [...expected], staticNames, byName, options, '(spawned)');
        for (const [index, event] of path.events.entries()) {
          const [kind, name] = splitEvent(event.type);
          const where = `step ${index + 1} (${event.type}) of '${path.description}'`;
          if (kind === 'mount') {
            await agent.mount(byName.get(name)!);
            expected.add(name);
          } else if (kind === 'unmount') {
            await agent.unmount(name);
            expected.delete(name);
          } else if (kind === 'signal') {
            const spec = signals[name]!;
            const outcome = await agent.call(spec.signal).then(
              (value) => ({ ok: true as const, value }),
              (error: unknown) => {
                if (!(error instanceof RuntimeError)) throw new Error(`${where}: the call rejected with something that is not a RuntimeError: ${String(error)}`);
                return { ok: false as const, error };
              },
            );
            spec.expect?.(outcome, [...expected]);
          } else if (kind === 'fault') {
            await faults[name]!(agent, system);
          }
          await assertStep(agent, [...expected], staticNames, byName, options, where);
        }
      } finally {
        await system.shutdown();
      }
    },
  };
}

function splitEvent(type: string): [string, string] {
  const dot = type.indexOf('.');
  return [type.slice(0, dot), type.slice(dot + 1)];
}

async function assertStep(
  agent: AgentRef<object>,
  expected: string[],
  staticNames: ReadonlySet<string>,
  optional: ReadonlyMap<string, AnySkill>,
  options: AgentModelOptions,
  where: string,
): Promise<void> {
  const violations = checkAgentInvariants(agent, [...optional.values()]);
  const mounted = agent.getSnapshot().mounted.map((record) => record.name).filter((name) => !staticNames.has(name));
  if ([...mounted].sort().join() !== [...expected].sort().join()) {
    violations.push(`mounted optional skills are [${mounted.join(', ')}], the model expects [${expected.join(', ')}]`);
  }
  const probe = options.probe ?? createSignal('skillstate.model.probe');
  try {
    await agent.call(probe, { timeout: options.probeTimeout ?? 2_000 });
  } catch (error) {
    if (!(error instanceof RuntimeError) || error.code === 'timeout' || error.code === 'agent_stopped') {
      violations.push(`the agent did not answer a probe: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (violations.length) throw new Error(`${where}: invariants violated:\n- ${violations.join('\n- ')}`);
}

/**
 * Checks the runtime's invariants (docs/architecture.md) on a running agent and returns the violations (empty when all
 * hold). `knownSkills` are skills that may have been mounted at some point: give the skills
 * themselves (or their names) so that a slice left under a state key other than the skill's
 * name is found too.
 */
export function checkAgentInvariants(agent: AgentRef<object>, knownSkills: readonly (string | AnySkill)[] = []): string[] {
  const violations: string[] = [];
  const view = agent.getSnapshot();
  if (view.status === 'stopped') return ['the agent is stopped'];
  const catalog = catalogOf(view.agent);
  if (!catalog) return ['the agent value has lost its catalog'];
  const expectedActions = catalog.registeredActions().sort();
  const registered = [...view.registeredActions].sort();
  if (expectedActions.join() !== registered.join()) {
    violations.push(`registered actions [${registered.join(', ')}] differ from the active skills' actions [${expectedActions.join(', ')}]`);
  }
  const mounted = new Map(view.mounted.map((record) => [record.name, record]));
  const state = view.state as Record<string, unknown>;
  const children = agent.actor.getSnapshot().children as Record<string, AnyActorRef | undefined>;
  const knownKeys = new Map<string, string>();
  for (const skill of knownSkills) if (typeof skill !== 'string') knownKeys.set(skill.name, skill.stateKey);
  const names = new Set([...knownSkills.map((skill) => (typeof skill === 'string' ? skill : skill.name)), ...mounted.keys(), ...Object.keys(view.lifecycles)]);
  for (const name of names) {
    const record = mounted.get(name);
    const active = catalog.skills.get(name);
    if (record && !Object.hasOwn(state, record.stateKey)) violations.push(`skill '${name}' is mounted but has no state under '${record.stateKey}'`);
    if (!record) {
      const key = knownKeys.get(name) ?? catalog.blueprint.resolveSkill(name)?.stateKey ?? name;
      if (Object.hasOwn(state, key) && !catalog.ownKeys.has(key)) violations.push(`skill '${name}' is not mounted but its state '${key}' remains`);
    }
    const lifecycle = children[lifecycleId(name)];
    const value = lifecycle?.getSnapshot().value as string | undefined;
    if (record && value !== 'active' && value !== 'failed') violations.push(`skill '${name}' is mounted but its lifecycle is ${value ?? 'missing'}`);
    if (!record && value !== undefined && value !== 'inactive') violations.push(`skill '${name}' is not mounted but its lifecycle is ${value}`);
    if (view.lifecycles[name] !== undefined && value !== undefined && view.lifecycles[name] !== value) {
      violations.push(`skill '${name}': the agent records its lifecycle as ${view.lifecycles[name]}, the lifecycle machine is ${value}`);
    }
    const running = lifecycle ? Object.keys(lifecycle.getSnapshot().children ?? {}).filter((id) => lifecycle.getSnapshot().children[id]?.getSnapshot().status === 'active') : [];
    const plans = active?.spec.children?.(active.config) ?? [];
    if (value === 'active') {
      for (const plan of plans) {
        if ((plan.restart ?? 'permanent') !== 'temporary' && !running.includes(plan.id)) violations.push(`skill '${name}' is active but its child '${plan.id}' is not running`);
      }
    } else if (running.length) {
      violations.push(`skill '${name}' is ${value ?? 'not mounted'} but children run: ${running.join(', ')}`);
    }
  }
  return violations;
}
