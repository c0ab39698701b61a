/**
 * Values that are sync unless user code made them async. The hot path (a sync action, a sync
 * hook) allocates no promise: a promise appears only where user code returned one.
 *
 * Pure: no I/O, no XState.
 */

/** A value, or a promise of it when user code was async. */
export type MaybePromise<T> = T | Promise<T>;

/** True for anything with a `then` method (a promise, or a promise-like from another library). */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';
}

/** Applies `next` to a value that may be a promise, staying synchronous when it is not. */
export function andThen<T, U>(value: MaybePromise<T>, next: (resolved: T) => MaybePromise<U>): MaybePromise<U> {
  return isThenable(value) ? (value as Promise<T>).then(next) : next(value as T);
}
