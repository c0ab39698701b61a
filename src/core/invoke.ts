/**
 * The one door through which skillstate calls user code (an action's `run`, a skill's hooks).
 * By default the code is called directly; a host may pass its own `InvokeUserCode` to wrap each
 * call — to journal it in a durable workflow, time it, or replay a recorded answer — without
 * changing what the call means.
 *
 * Pure: no I/O, no XState.
 */

/** What is being called, as error messages name it. */
export interface UserCodeCall {
  /** e.g. `action 'add'`, `handleSignal of skill 'calculator'`. */
  readonly what: string;
  readonly skill?: string;
  readonly action?: string;
}

/**
 * Calls `fn` (user code) and returns what it returned, or throws what it threw: a wrapper must
 * keep that contract, since the caller turns throws and rejections into typed errors.
 */
export type InvokeUserCode = <T>(call: UserCodeCall, fn: () => T) => T;
