/**
 * Diagnostics: things that are not errors but must not pass silently — a route shadowed by
 * another, two skills offering an action of the same name, a tool renamed to avoid a clash, a
 * skill folder skipped during discovery. Plain data, collected where they arise and returned to
 * the caller (or passed to the `onDiagnostic` callback a component was given).
 *
 * Pure: no I/O, no XState.
 */

/** How much a diagnostic matters: `info`, `warning` or `error` (the default handler prints warnings and errors). */
export type DiagnosticLevel = 'info' | 'warning' | 'error';

/** A warning or a note that is not an error: a shadowed route, a renamed tool, a skipped skill. */
export interface Diagnostic {
  level: DiagnosticLevel;
  /** Stable, machine-readable: e.g. `shadowed_route`, `action_name_clash`, `skill_skipped`. */
  code: string;
  message: string;
  skill?: string;
  /** The path, pattern or name the diagnostic is about. */
  subject?: string;
  details?: Record<string, unknown>;
}

/** Receives diagnostics as they are produced. */
export type DiagnosticListener = (diagnostic: Diagnostic) => void;

/** Builds a diagnostic, leaving out fields that are undefined. */
export function diagnostic(
  level: DiagnosticLevel,
  code: string,
  message: string,
  extras: { skill?: string | undefined; subject?: string | undefined; details?: Record<string, unknown> | undefined } = {},
): Diagnostic {
  const value: Diagnostic = { level, code, message };
  if (extras.skill !== undefined) value.skill = extras.skill;
  if (extras.subject !== undefined) value.subject = extras.subject;
  if (extras.details !== undefined) value.details = extras.details;
  return value;
}
