/**
 * Errors as data. Every failure skillstate reports carries a stable `code`, the name or path of
 * the culprit, and a message a person can act on. Definition-time mistakes are thrown as
 * `SkillstateError` subclasses; run-time failures travel as plain `ErrorInfo` objects inside
 * results and `error` effects, so they survive JSON, persistence and the inspector.
 *
 * Pure: no I/O, no XState.
 */
import type { ErrorCode, ErrorDetails, ErrorFields, ErrorInfo, Issue } from './error-info.js';

export type { ErrorCode, ErrorDetails, ErrorInfo, Issue } from './error-info.js';

/**
 * Attaches what was thrown to `info` as its `cause`, not enumerable (in memory only: the error
 * stays plain data for JSON and snapshots). Returns `info`.
 */
export function withCause<T extends ErrorInfo>(info: T, cause: unknown): T {
  if (cause !== undefined) Object.defineProperty(info, 'cause', { value: cause, enumerable: false, writable: false, configurable: true });
  return info;
}

/** A copy of `info` with `changes` applied (its code and details stay), keeping its `cause`. */
export function reworded<C extends ErrorCode>(info: ErrorInfo<C>, changes: Partial<Omit<ErrorFields, 'cause'>>): ErrorInfo<C> {
  return withCause({ ...info, ...changes }, info.cause);
}

/**
 * The one base class for errors skillstate throws. `is(code)` narrows it to that code, so its
 * `details` has the code's shape.
 */
export class SkillstateError extends Error {
  readonly code: ErrorCode;
  readonly skill: string | undefined;
  readonly action: string | undefined;
  readonly subject: string | undefined;
  readonly issues: Issue[] | undefined;
  readonly details: ErrorDetails<this['code']> | undefined;

  constructor(info: ErrorInfo, options?: { cause?: unknown }) {
    // What user code threw travels with the info; an explicit cause wins.
    super(info.message, options ?? (info.cause === undefined ? undefined : { cause: info.cause }));
    this.name = new.target.name;
    this.code = info.code;
    this.skill = info.skill;
    this.action = info.action;
    this.subject = info.subject;
    this.issues = info.issues;
    this.details = info.details as ErrorDetails<this['code']> | undefined;
  }

  /** True when the error has code `code`; its `details` then have that code's shape. */
  is<K extends ErrorCode>(code: K): this is this & { readonly code: K } {
    return this.code === code;
  }

  /** The plain-data form, safe to put in an effect or a snapshot (the cause rides along, not enumerable). */
  toInfo(): ErrorInfo<this['code']> {
    const info = errorInfo<this['code']>(this.code, this.message, {
      skill: this.skill,
      action: this.action,
      subject: this.subject,
      issues: this.issues,
      details: this.details,
    });
    return withCause(info, this.cause);
  }

  toJSON(): ErrorInfo<this['code']> {
    return this.toInfo();
  }
}

/** A signal that is not a valid CloudEvent of ours. */
export class SignalError extends SkillstateError {}
/** A route or pattern rejected by the router. */
export class RouteError extends SkillstateError {}
/** A skill, action or agent definition that cannot work. Thrown when the definition is made. */
export class DefinitionError extends SkillstateError {}
/** An initial state that does not satisfy the agent's schema, or options `definition.new()` does not take. Thrown by `definition.new()`. */
export class StateError extends SkillstateError {}

/** Fields of an `ErrorInfo` of code `C` besides its code and message. */
export interface ErrorExtras<C extends ErrorCode = ErrorCode> {
  skill?: string | undefined;
  action?: string | undefined;
  subject?: string | undefined;
  issues?: Issue[] | undefined;
  details?: ErrorDetails<C> | undefined;
}

/** Builds an `ErrorInfo`, leaving out the fields that are undefined so the object stays tidy. */
export function errorInfo<C extends ErrorCode>(code: C, message: string, extras?: ErrorExtras<C>): ErrorInfo<C> {
  const info = { code, message } as { code: C; message: string } & ErrorExtras<C>;
  if (extras) {
    if (extras.skill !== undefined) info.skill = extras.skill;
    if (extras.action !== undefined) info.action = extras.action;
    if (extras.subject !== undefined) info.subject = extras.subject;
    if (extras.issues !== undefined) info.issues = extras.issues;
    if (extras.details !== undefined) info.details = extras.details;
  }
  return info as ErrorInfo<C>;
}

/**
 * The `ErrorInfo` of anything that was thrown: a `SkillstateError`'s own (code, culprit, details),
 * else the `fallback` code with the description of what was thrown as its message, or what
 * `fallback` makes of that description.
 */
export function toErrorInfo(thrown: unknown, fallback: ErrorCode | ((described: string) => ErrorInfo)): ErrorInfo {
  if (thrown instanceof SkillstateError) return thrown.toInfo();
  const described = describeThrown(thrown);
  return typeof fallback === 'function' ? fallback(described) : errorInfo(fallback, described);
}

/**
 * Throws the `DefinitionError` for one field of an action or skill definition, naming it:
 * `action 'add': input must be a zod object schema`.
 */
export function refuseDefinitionField(kind: 'action' | 'skill', name: unknown, field: string, message: string): never {
  const info: ErrorInfo<'invalid_action' | 'invalid_skill'> = { code: kind === 'action' ? 'invalid_action' : 'invalid_skill', message: `${kind} '${String(name)}': ${field} ${message}`, details: { field } };
  if (typeof name === 'string') info[kind] = name;
  throw new DefinitionError(info);
}

/** True when `value` has the shape of an `ErrorInfo`. */
export function isErrorInfo(value: unknown): value is ErrorInfo {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ErrorInfo).code === 'string' &&
    typeof (value as ErrorInfo).message === 'string'
  );
}

/**
 * The message of anything that was thrown. User code may throw strings, plain objects or
 * `null`; none of them may crash the code that reports the failure.
 */
export function describeThrown(thrown: unknown): string {
  try {
    if (thrown instanceof Error) return String(thrown.message || thrown.name);
    if (typeof thrown === 'string') return thrown;
    if (isErrorInfo(thrown)) return thrown.message;
  } catch {
    // a getter or a proxy that throws: fall through to the generic descriptions
  }
  try {
    const text = JSON.stringify(thrown);
    return text === undefined ? String(thrown) : text;
  } catch {
    try {
      return String(thrown);
    } catch {
      return `a thrown ${typeof thrown} that cannot be described`;
    }
  }
}

/** Converts zod issues (or any `{ path, message }` list) into our `Issue` shape. */
export function toIssues(
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string; code?: string }>,
): Issue[] {
  return issues.map((issue) => {
    const converted: Issue = {
      path: issue.path.map((key) => (typeof key === 'number' ? key : String(key))),
      message: inheritedFieldHint(issue),
    };
    if (issue.code !== undefined) converted.code = issue.code;
    return converted;
  });
}

/**
 * An issue's message, with why when zod saw a function where a field named like an
 * `Object.prototype` member (`constructor`, `toString`, `valueOf`...) is missing: zod reads the
 * inherited member, so the field is never missing to it and its default never applies.
 */
function inheritedFieldHint(issue: { path: ReadonlyArray<PropertyKey>; message: string; code?: string }): string {
  const key = issue.path.at(-1);
  if (issue.code !== 'invalid_type' || typeof key !== 'string' || !(key in Object.prototype) || !issue.message.endsWith('received function')) return issue.message;
  return `${issue.message} (a missing '${key}' reads as the '${key}' every object inherits, so no default applies to it: give it a value, or rename the field)`;
}

/** Formats issues as `path: message; path: message` for a one-line error message. */
export function formatIssues(issues: readonly Issue[]): string {
  return issues
    .map((issue) => (issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}
