/**
 * Calling a skill's hooks without ever letting them throw into the caller. A hook may throw,
 * return a rejected promise, or return garbage; each becomes a `Result` with a typed error that
 * names the skill and the hook. Sync code stays sync: a promise appears only when the hook
 * returned one. Every call goes through the host's `InvokeUserCode` when it gave one.
 *
 * Pure: no XState, no timers, no I/O.
 */
import { describeThrown, errorInfo, withCause, type ErrorCode, type ErrorInfo } from '../core/errors.js';
import { isThenable } from '../core/maybe-async.js';
import type { InvokeUserCode } from '../core/invoke.js';
import type { Result } from '../core/result.js';

/** A hook call: what it is for messages, the skill, and the error code a failure gets. */
export interface HookSite {
  /** What ran, for the message: e.g. `handleSignal of skill 'calculator'`. */
  what: string;
  skill?: string;
  code?: ErrorCode;
}

function failure(site: HookSite, thrown: unknown): { ok: false; error: ErrorInfo } {
  return {
    ok: false,
    error: withCause(errorInfo(site.code ?? 'hook_failed', `${site.what} failed: ${describeThrown(thrown)}`, site.skill === undefined ? undefined : { skill: site.skill }), thrown),
  };
}

/** Runs `fn`, turning a throw or a rejection into a failed outcome. Never throws, never rejects. */
export function callSafely<T>(site: HookSite, fn: () => T | Promise<T>, invoke?: InvokeUserCode): Result<T> | Promise<Result<T>> {
  let returned: T | Promise<T>;
  let thenable: boolean;
  try {
    returned = invoke ? invoke(site, fn) : fn();
    // Inside the try: reading `then` of what user code returned may itself throw (a getter, a proxy).
    thenable = isThenable(returned);
  } catch (thrown) {
    return failure(site, thrown);
  }
  if (thenable) {
    return Promise.resolve(returned).then(
      (value): Result<T> => ({ ok: true, value: value as T }),
      (thrown: unknown) => failure(site, thrown),
    );
  }
  return { ok: true, value: returned as T };
}
