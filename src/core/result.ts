/**
 * The one result type of skillstate's operations that refuse instead of throwing: a value, or
 * an `ErrorInfo` with a stable code.
 *
 * Pure: no I/O, no XState.
 */
import type { ErrorInfo } from './errors.js';

/** A value, or the error that prevented it. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: ErrorInfo };

/** A successful result. */
export function ok<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

/** A failed result. */
export function refused(error: ErrorInfo): { ok: false; error: ErrorInfo } {
  return { ok: false, error };
}
