/**
 * Calling user code from the runtime without ever letting it throw into XState. A hook, a
 * route handler or a transform may throw, return a rejected promise, or return garbage; each
 * becomes an `Outcome` with a typed error that names the skill and the hook. Sync code stays
 * sync: a promise appears only when the user code returned one.
 */
import { describeThrown, errorInfo, withCause, type ErrorCode, type ErrorInfo } from '../core/errors.js';

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: ErrorInfo };

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';
}

/** Applies `next` to a value that may be a promise, staying synchronous when it is not. */
export function andThen<T, U>(value: T | Promise<T>, next: (resolved: T) => U | Promise<U>): U | Promise<U> {
  return isThenable(value) ? (value as Promise<T>).then(next) : next(value as T);
}

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
export function callSafely<T>(site: HookSite, fn: () => T | Promise<T>): Outcome<T> | Promise<Outcome<T>> {
  let returned: T | Promise<T>;
  let thenable: boolean;
  try {
    returned = fn();
    // Inside the try: reading `then` of what user code returned may itself throw (a getter, a proxy).
    thenable = isThenable(returned);
  } catch (thrown) {
    return failure(site, thrown);
  }
  if (thenable) {
    return Promise.resolve(returned).then(
      (value): Outcome<T> => ({ ok: true, value: value as T }),
      (thrown: unknown) => failure(site, thrown),
    );
  }
  return { ok: true, value: returned as T };
}
