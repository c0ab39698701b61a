/**
 * Errors the runtime hands to callers: a rejected `call`, a refused `send` (full mailbox,
 * stopped agent), a restore that cannot work. Each carries the stable code of the `ErrorInfo`
 * it was made from, so callers match on `error.code`. Here, below every host, because each host
 * (the in-process runtime, the model loop, Restate) throws the same errors.
 *
 * Pure: no I/O, no XState.
 */
import { errorInfo, SkillstateError, type ErrorExtras, type ErrorInfo } from './errors.js';

/** An error from a running agent or system (a call that timed out, a stopped agent, a full mailbox, a failed step...), with a stable `code`. */
export class RuntimeError extends SkillstateError {
  /** The agent the error concerns, when there is one. */
  readonly agentId: string | undefined;

  constructor(info: ErrorInfo, agentId?: string, options?: { cause?: unknown }) {
    super(info, options);
    this.agentId = agentId;
  }
}

/**
 * The error of a call or a run that got no answer in time, worded the same by every host:
 * `<what> to agent '<id>' got no answer within <ms> ms` (what: `call 'x'`, `run of 'y'`).
 */
export function noAnswerError(what: string, agentId: string, ms: number, extras?: ErrorExtras<'timeout'>): ErrorInfo<'timeout'> {
  return errorInfo('timeout', `${what} to agent '${agentId}' got no answer within ${ms} ms`, extras);
}

