/**
 * One model-test run against a real agent: a session (a fresh system and agent, the mounted
 * optional skills the model expects, the reference model's state) and `takeStep`, which carries
 * out one step — mount, unmount, signal, fault, restart, persist — and checks everything after
 * it. Graph paths, random command sequences and pasted replays all go through here, so they
 * check the same things.
 *
 * A step's checks, in order: the signal's `expect` (or, without one, that a routed signal
 * succeeded); that a failed step changed nothing; that the snapshot taken before the step did
 * not change afterwards (committed state mutated in place); the reference model's `agrees`; and
 * `checkAgentInvariants` with the mounted skills and a probe. A violation throws a
 * `ModelViolation` naming the step.
 */
import type { AgentDefinition } from '../core/agent-definition.js';
import { createSignal, type Signal, type SignalLike } from '../core/signal.js';
import type { AnySkill } from '../core/skill.js';
import type { AgentRef } from '../runtime/agent-ref.js';
import { RuntimeError } from '../core/runtime-error.js';
import type { AgentSystem } from '../runtime/system.js';
import { createAgentSystem, type AgentSystemOptions } from '../system.js';
import { checkAgentInvariants } from './invariants.js';

/** What a signal step answered: the call's result, or the typed error it rejected with. */
export type ModelOutcome = { ok: true; value: unknown } | { ok: false; error: RuntimeError };

/**
 * One step of a model test, as plain data (what a shrunk failure is printed as):
 * `{ mount: 'tickets' }`, `{ unmount: 'tickets' }`, `{ signal: 'create' }`, `{ fault: 'crash' }`,
 * `{ restart: true }` (the process restarts: the agent is restored from its snapshot in a new
 * system) or `{ persist: true }` (the agent is stopped and restored from its snapshot, after a
 * JSON round trip, in the same system).
 */
export type ModelStep = { mount: string } | { unmount: string } | { signal: string } | { fault: string } | { restart: true } | { persist: true };

/** A signal the model may send, and what its answer must satisfy. */
export interface ModelSignal<M = undefined> {
  /** The signal, or a function of the reference model's state that builds it. */
  signal: Signal | SignalLike | string | ((model: M) => Signal | SignalLike | string);
  /**
   * Called with the result (or the `RuntimeError`), the mounted optional skills and the reference
   * model's state before the step; throw (or reject, when async) to fail the step. Without it, a
   * routed signal must succeed (an unrouted one may answer `no_route`) unless `mayFail` is set.
   */
  expect?: (outcome: ModelOutcome, mounted: readonly string[], model: M) => void | Promise<void>;
  /** Without `expect`: accept a typed error from a routed signal too. Default false. */
  mayFail?: boolean;
}

/**
 * A reference model: what the agent's domain should do, as a plain reducer over a small state.
 * The model test keeps it beside the real agent and checks the two agree.
 */
export interface ReferenceModel<M> {
  /** The model's state when the agent is spawned (plain data: each run starts from a copy). */
  initial: M;
  /** The model's state after a step that succeeded; never called for a failed one (which must change nothing). Return a new value. */
  reduce(model: M, step: ModelStep): M;
  /** Compares the agent's committed state with the model after every step; throw (or return a message) when they disagree. */
  agrees?(model: M, state: Readonly<Record<string, unknown>>, mounted: readonly string[]): void | string | Promise<void | string>;
}

/** Everything the driver needs: the model's definition, resolved. */
export interface ModelSetup<M> {
  definition: AgentDefinition<object>;
  optional: ReadonlyMap<string, AnySkill>;
  staticNames: ReadonlySet<string>;
  signals: Readonly<Record<string, ModelSignal<M>>>;
  faults: Readonly<Record<string, (agent: AgentRef<object>, system: AgentSystem) => unknown>>;
  reference: ReferenceModel<M> | undefined;
  system: AgentSystemOptions | undefined;
  probe: Signal | SignalLike | string | undefined;
  probeTimeout: number | undefined;
}

/** A run in progress. */
export interface ModelSession<M> {
  system: AgentSystem;
  agent: AgentRef<object>;
  /** The optional skills the model expects mounted. */
  mounted: Set<string>;
  model: M;
  /** The steps taken so far. */
  steps: ModelStep[];
}

/** A broken invariant or expectation, with the steps that led to it. */
export class ModelViolation extends Error {
  constructor(
    message: string,
    /** The steps taken, the failing one last. */
    readonly steps: readonly ModelStep[],
  ) {
    super(message);
    this.name = 'ModelViolation';
  }
}

/** A step as text: `mount tickets`, `signal create`, `restart`. */
export function describeStep(step: ModelStep): string {
  const [kind, value] = Object.entries(step)[0]!;
  return value === true ? kind : `${kind} ${String(value)}`;
}

function systemFor<M>(setup: ModelSetup<M>): AgentSystem {
  const own = setup.system?.skills;
  // Restoring an agent resolves its mounted skills by name: the optional ones must be findable.
  const skills = own === undefined ? [...setup.optional.values()] : Array.isArray(own) ? [...own, ...setup.optional.values()] : own;
  const system = createAgentSystem({ onUnhandledError: () => {}, onUnhandledDiagnostic: () => {}, ...setup.system, skills });
  system.register(setup.definition);
  return system;
}

/** Starts a session: a fresh system and agent, checked once before any step. */
export async function startSession<M>(setup: ModelSetup<M>): Promise<ModelSession<M>> {
  const system = systemFor(setup);
  const session: ModelSession<M> = {
    system,
    agent: system.spawn(setup.definition),
    mounted: new Set(),
    model: setup.reference ? structuredClone(setup.reference.initial) : (undefined as M),
    steps: [],
  };
  const violations = await violationsAfter(session, setup);
  if (violations.length) {
    await session.system.shutdown();
    throw new ModelViolation(`(spawned): invariants violated:\n- ${violations.join('\n- ')}`, []);
  }
  return session;
}

/** The committed facts a failed step must leave as they were. */
function committed(agent: AgentRef<object>): string {
  const view = agent.getSnapshot();
  return JSON.stringify({ state: view.state, mounted: view.mounted, registeredActions: [...view.registeredActions].sort() });
}

function failure(error: unknown): ModelOutcome {
  if (error instanceof RuntimeError) return { ok: false, error };
  throw new Error(`the call rejected with something that is not a RuntimeError: ${String(error)}`);
}

/** How long a mount or an unmount may take, as long as a call waits by default: one that never settles fails its step. */
const SETTLE_LIMIT_MS = 5_000;

/** A mount's own wait, left to `settlesWithin`: its message says why the step never ended. */
const UNBOUNDED = { timeout: Infinity } as const;

/** `promise`, or a rejection saying `what` did not settle within `SETTLE_LIMIT_MS`. */
function settlesWithin<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${SETTLE_LIMIT_MS} ms (a hook that never settles keeps the agent busy for good)`)), SETTLE_LIMIT_MS);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Carries out one step and checks everything after it; throws a `ModelViolation` when something is wrong. */
export async function takeStep<M>(session: ModelSession<M>, setup: ModelSetup<M>, step: ModelStep): Promise<void> {
  session.steps.push(step);
  const where = `step ${session.steps.length} (${describeStep(step)})`;
  const violations: string[] = [];
  const beforeView = session.agent.getSnapshot();
  const before = committed(session.agent);
  const beforeState = JSON.stringify(beforeView.state);
  let outcome: ModelOutcome = { ok: true, value: undefined };
  const mounted = () => [...session.mounted].sort();
  try {
    if ('mount' in step) {
      await settlesWithin(session.agent.mount(setup.optional.get(step.mount)!, undefined, UNBOUNDED), `mount of '${step.mount}'`);
      session.mounted.add(step.mount);
    } else if ('unmount' in step) {
      await settlesWithin(session.agent.unmount(step.unmount, UNBOUNDED), `unmount of '${step.unmount}'`);
      session.mounted.delete(step.unmount);
    } else if ('signal' in step) {
      const spec = setup.signals[step.signal]!;
      const signal = typeof spec.signal === 'function' ? spec.signal(session.model) : spec.signal;
      outcome = await session.agent.call(signal).then((value) => ({ ok: true as const, value }), failure);
      if (spec.expect) {
        try {
          // Awaited: an async `expect` that throws fails the step like a sync one.
          await spec.expect(outcome, mounted(), session.model);
        } catch (error) {
          violations.push(`the answer is not the expected one: ${error instanceof Error ? error.message : String(error)}`);
        }
      } else if (!outcome.ok && outcome.error.code !== 'no_route' && !spec.mayFail) {
        violations.push(`signal '${step.signal}' failed with ${outcome.error.code}: ${outcome.error.message} (a routed signal without expect must succeed; give expect or mayFail to allow a failure)`);
      }
    } else if ('fault' in step) {
      await setup.faults[step.fault]!(session.agent, session.system);
    } else {
      const snapshot = JSON.parse(JSON.stringify(session.agent.persist())) as unknown;
      if ('restart' in step) {
        await session.system.shutdown();
        session.system = systemFor(setup);
      } else {
        await session.system.stop(session.agent.id);
      }
      session.agent = session.system.restore(snapshot);
      const after = committed(session.agent);
      if (after !== before) violations.push(`the restored agent differs from the one persisted:\n  before ${before}\n  after  ${after}`);
    }
  } catch (error) {
    if (error instanceof ModelViolation) throw error;
    outcome = { ok: false, error: error instanceof RuntimeError ? error : new RuntimeError({ code: 'signal_failed', message: String(error) }) };
    violations.push(`${describeStep(step)} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!outcome.ok) {
    const after = committed(session.agent);
    if (after !== before) violations.push(`the step failed (${outcome.error.code}) but changed the agent:\n  before ${before}\n  after  ${after}`);
  } else if (setup.reference) {
    session.model = setup.reference.reduce(session.model, step);
  }
  // A snapshot handed out before the step is the committed state of that moment; if the step
  // changed it, user code mutated committed state in place.
  if (JSON.stringify(beforeView.state) !== beforeState) violations.push(`a snapshot taken before the step changed during it (committed state was mutated in place):\n  was ${beforeState}\n  now ${JSON.stringify(beforeView.state)}`);
  violations.push(...(await violationsAfter(session, setup)));
  if (violations.length) throw new ModelViolation(`${where}: ${violations.length === 1 ? violations[0] : `invariants violated:\n- ${violations.join('\n- ')}`}`, [...session.steps]);
}

/** The invariants, the model's agreement, the mounted skills and the probe, after a step. */
async function violationsAfter<M>(session: ModelSession<M>, setup: ModelSetup<M>): Promise<string[]> {
  const { agent } = session;
  const violations = checkAgentInvariants(agent, [...setup.optional.values()]);
  const view = agent.getSnapshot();
  const mounted = view.mounted.map((record) => record.name).filter((name) => !setup.staticNames.has(name));
  const expected = [...session.mounted];
  if ([...mounted].sort().join() !== [...expected].sort().join()) {
    violations.push(`mounted optional skills are [${mounted.join(', ')}], the model expects [${expected.join(', ')}]`);
  }
  if (setup.reference?.agrees && view.status !== 'stopped') {
    try {
      const disagreement: unknown = await setup.reference.agrees(session.model, view.state as Record<string, unknown>, [...expected].sort());
      if (typeof disagreement === 'string') violations.push(`the agent disagrees with the reference model: ${disagreement}`);
    } catch (error) {
      violations.push(`the agent disagrees with the reference model: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const probe = setup.probe ?? createSignal('skillstate.model.probe');
  try {
    await agent.call(probe, { timeout: setup.probeTimeout ?? 2_000 });
  } catch (error) {
    if (!(error instanceof RuntimeError) || error.code === 'timeout' || error.code === 'agent_stopped') {
      violations.push(`the agent did not answer a probe: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return violations;
}
