/**
 * The errors document skills throw: one class, `ManifestError`, whose `code` says which part
 * failed (`invalid_manifest`, `skill_not_found`, `resource_refused`, `resource_not_found`,
 * `toolset_failed`, `script_refused`, `script_failed`). Each names the file, skill or path at
 * fault in its message and in `subject`.
 *
 * Pure: no I/O.
 */
import { errorInfo, SkillstateError, type ErrorCode, type ErrorExtras } from '../core/errors.js';

/** A failure of the document-skill layer: a manifest, a resource, a toolset or a script. */
export class ManifestError extends SkillstateError {}

/** Builds a `ManifestError`. */
export function manifestError<C extends ErrorCode>(code: C, message: string, extras?: ErrorExtras<C>, cause?: unknown): ManifestError {
  return new ManifestError(errorInfo(code, message, extras), cause === undefined ? undefined : { cause });
}
