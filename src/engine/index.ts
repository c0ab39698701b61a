/**
 * The step engine: everything that decides what one step of an agent does, and nothing that
 * carries it out. Any host — the in-process runtime (`src/runtime/`), a durable workflow, a
 * test harness, a server — runs the same engine and gets the same semantics.
 *
 * Contract of `stepAgent(agent, item, options?)`:
 *
 * - **Input**: a linked agent value (its catalog travels with it), and one mailbox item: a
 *   `signal` (with `call: true` when a caller waits for the reply), `instructions` (maybe with a
 *   `record`: an action that runs after them in the same step, given their output, so what they
 *   did and the record of it commit together), a `mount` of a skill the host has found, an
 *   `unmount`, or `start` (the `mount` hooks of a spawned agent).
 * - **Output**: a `StepOutcome` — the agent after the step, the effects for the host to carry
 *   out in order (`run` effects are already carried out inside the step), the reply for a call,
 *   the error when the step failed, diagnostics, and the signal as routed (after rewrites).
 * - **Atomic**: a failed step returns the agent it was given, unchanged, with one `error` effect.
 * - **Total**: it never throws and never rejects. User code that throws, rejects or returns
 *   garbage becomes a typed error naming the skill and the hook or action.
 * - **Sync unless user code is async**: a promise is returned only when an action, a hook or a
 *   schema returned one, so hosts keep the fast path synchronous.
 * - **Pure**: no XState, no timers, no I/O, no globals beyond caches keyed by immutable values.
 *   The only code it runs that it does not own is user code, and every such call goes through
 *   `options.invoke` when the host gives one (to journal it, for one). A host that can cancel a
 *   step under way gives `options.abortSignal()`, asked when an action first reads
 *   `ctx.abortSignal`; without it, actions get a signal that is never aborted.
 *
 * The engine imports only `src/core/`.
 */
export { stepAgent, type StepOptions, type WorkItem } from './step.js';
export { failedOutcome, unknownSkillOutcome, type StepOutcome } from './outcome.js';
export { MAX_RUN_DEPTH } from './signal-step.js';
export { checkCatalog, childSpecs } from './skill-checks.js';
