/**
 * Model-based testing of agent definitions (`skillstate/testing`).
 *
 * `createAgentTestModel(definition, options)` builds an abstract model of an agent: one state
 * per set of optional skills that can be mounted together (requirements respected), with
 * events to mount and unmount each of them, to send each named signal and to inject each named
 * fault. Two ways to explore it, both on real agents:
 *
 * - `xstate/graph` walks the mount topology (shortest paths, simple paths) and `run(path)`
 *   replays a path;
 * - `check()` draws random interleavings of signals, mounts, unmounts, faults, restarts and
 *   persist/restore with fast-check (`fc.commands`), and shrinks a failure to a minimal sequence
 *   printed as a `model.replay([...])` call to paste into a test.
 *
 * With a reference model (`model: { initial, reduce, agrees }`), each signal's `expect` sees the
 * model's state, so tests reach domain behaviour. After every step the driver checks the
 * signal's expectation, that a failed step changed nothing, that committed state was not mutated
 * in place, the reference model's agreement, and the invariants (`checkAgentInvariants`):
 * registered actions, slices present and valid against their schemas, lifecycle states, skill
 * children, the mounted skills the model expects, and that the agent still answers.
 */
import { createMachine } from 'xstate';
import { createTestModel, type TestModel } from 'xstate/graph';
import type { AgentDefinition } from '../core/agent-definition.js';
import { DefinitionError } from '../core/errors.js';
import type { Signal, SignalLike } from '../core/signal.js';
import type { AnySkill } from '../core/skill.js';
import type { AgentRef } from '../runtime/agent-ref.js';
import type { AgentSystem } from '../runtime/system.js';
import type { AgentSystemOptions } from '../system.js';
import { describeStep, ModelViolation, startSession, takeStep, type ModelSetup, type ModelSignal, type ModelStep, type ReferenceModel } from './driver.js';
import { checkRandomly, ModelCheckFailure, replayCode, type ModelCheckOptions } from './random.js';

export { checkAgentInvariants } from './invariants.js';
export { scriptedModel, type ScriptedModel, type ScriptedModelOptions, type ScriptedResponse, type ScriptedToolCall, type ScriptedStreamFailure, type ScriptedCall, type ScriptedPromptMessage, type ScriptStep } from './scripted-model.js';
export { ModelCheckFailure, ModelViolation, replayCode, type ModelCheckOptions, type ModelSignal, type ModelStep, type ReferenceModel };
export type { ModelOutcome } from './driver.js';

/** Options of `createAgentTestModel`. */
export interface AgentModelOptions<M = undefined> {
  /** Skills the model mounts and unmounts (the definition's own skills stay mounted). */
  skills?: readonly AnySkill[];
  /** Signals to send, by event name. */
  signals?: Record<string, ModelSignal<M>>;
  /** The reference model: what the agent's domain should do. Each signal's `expect` gets its state. */
  model?: ReferenceModel<M>;
  /** Faults to inject, by event name (crash a child, send poison...). The invariants must hold after each. */
  faults?: Record<string, (agent: AgentRef<object>, system: AgentSystem) => unknown | Promise<unknown>>;
  /** Options of the system each path runs in. */
  system?: AgentSystemOptions;
  /** A signal that must always be answered (with a result or a typed error) within `probeTimeout`. Default: an unrouted probe. */
  probe?: Signal | SignalLike | string;
  probeTimeout?: number;
}

/** An event of the test model: the signal type it sends. */
export type ModelEvent = { type: string };

/** A model of an agent for model-based testing: its paths, and a way to run each against a real system. */
export interface AgentTestModel<M = undefined> {
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
  /** Shortest paths, then simple paths (at most `max`, default 20), without a sequence twice. */
  paths(options?: { max?: number }): ModelPath[];
  /** Replays a path against a real agent, checking everything after each step. Throws a `ModelViolation` on the first violation. */
  run(path: ModelPath): Promise<void>;
  /** Runs a sequence of steps (what `check()` prints when it finds a failure). Throws a `ModelViolation` on the first violation. */
  replay(steps: readonly ModelStep[]): Promise<void>;
  /** Random sequences with fast-check; throws a `ModelCheckFailure` holding the shrunk sequence. */
  check(options?: ModelCheckOptions): Promise<void>;
}

/** One path through the test model, with a function that runs it against a real agent system. */
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
export function createAgentTestModel<M = undefined>(definition: AgentDefinition<object>, options: AgentModelOptions<M> = {}): AgentTestModel<M> {
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
  const setup: ModelSetup<M> = {
    definition,
    optional: byName,
    staticNames,
    signals,
    faults,
    reference: options.model,
    system: options.system,
    probe: options.probe,
    probeTimeout: options.probeTimeout,
  };
  const replaySteps = async (steps: readonly ModelStep[]) => {
    for (const step of steps) {
      if (!stepKnown(step)) throw new DefinitionError({ code: 'invalid_skill', message: `the model has no step ${describeStep(step)}`, subject: describeStep(step) });
    }
    const session = await startSession(setup);
    try {
      for (const step of steps) await takeStep(session, setup, step);
    } finally {
      await session.system.shutdown();
    }
  };
  const stepKnown = (step: ModelStep) =>
    'mount' in step ? byName.has(step.mount) : 'unmount' in step ? byName.has(step.unmount) : 'signal' in step ? Object.hasOwn(signals, step.signal) : 'fault' in step ? Object.hasOwn(faults, step.fault) : true;

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

  const shortestPaths = () => toPaths(model.getShortestPaths()).map(exercised);
  return {
    machine,
    model,
    shortestPaths,
    simplePaths: (options = {}) => simplePaths(options.max ?? 200),
    paths(options = {}) {
      const seen = new Set<string>();
      return [...shortestPaths(), ...simplePaths(options.max ?? 20)].filter((path) => {
        const key = path.events.map((event) => event.type).join(' ');
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
    },
    async run(path) {
      try {
        await replaySteps(path.events.map((event) => toStep(event.type)));
      } catch (error) {
        if (error instanceof ModelViolation) throw new ModelViolation(`${error.message}\n(path: ${path.description})`, error.steps);
        throw error;
      }
    },
    replay: (steps) => replaySteps(steps),
    check: (checkOptions) => checkRandomly(setup, checkOptions),
  };
}

/** A graph event (`mount.tickets`, `signal.create`) as a step. */
function toStep(type: string): ModelStep {
  const dot = type.indexOf('.');
  const kind = type.slice(0, dot);
  const name = type.slice(dot + 1);
  if (kind === 'mount') return { mount: name };
  if (kind === 'unmount') return { unmount: name };
  if (kind === 'signal') return { signal: name };
  return { fault: name };
}
