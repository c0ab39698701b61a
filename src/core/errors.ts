/**
 * Errors as data. Every failure skillstate reports carries a stable `code`, the name or path of
 * the culprit, and a message a person can act on. Definition-time mistakes are thrown as
 * `SkillstateError` subclasses; run-time failures travel as plain `ErrorInfo` objects inside
 * results and `error` effects, so they survive JSON, persistence and the inspector.
 *
 * Pure: no I/O, no XState.
 */

/** Every error code skillstate produces. Stable: match on these, not on messages. */
export type ErrorCode =
  // signals and patterns
  | 'invalid_signal'
  | 'invalid_pattern'
  | 'invalid_route'
  | 'invalid_priority'
  | 'guard_failed'
  | 'no_route'
  // definitions
  | 'invalid_action'
  | 'invalid_skill'
  | 'invalid_agent'
  | 'duplicate_state_key'
  | 'state_key_conflict'
  | 'invalid_config'
  | 'invalid_state'
  // cmd
  | 'invalid_instruction'
  | 'unknown_action'
  | 'ambiguous_action'
  | 'invalid_params'
  | 'action_failed'
  | 'invalid_output'
  | 'invalid_state_update'
  | 'invalid_effect'
  | 'unlinked_agent'
  // mount / unmount
  | 'missing_dependency'
  | 'required_by'
  | 'dependency_cycle'
  | 'unknown_skill'
  | 'skill_conflict'
  | 'already_mounted'
  // runtime
  | 'hook_failed'
  | 'signal_failed'
  | 'effect_loop'
  | 'skill_failed'
  | 'timeout'
  | 'mailbox_full'
  | 'agent_stopped'
  | 'unknown_agent'
  | 'duplicate_agent'
  | 'invalid_snapshot'
  | 'invalid_trace'
  | 'invalid_options'
  | 'cancelled'
  // model-driven agents
  | 'model_not_found'
  | 'model_unavailable'
  | 'model_failed'
  | 'model_timeout'
  | 'rate_limited'
  | 'turn_limit'
  | 'budget_exceeded'
  | 'approval_denied'
  | 'no_turn'
  // document skills
  | 'invalid_manifest'
  | 'skill_not_found'
  | 'resource_refused'
  | 'resource_not_found'
  | 'toolset_failed'
  | 'script_refused'
  | 'script_failed'
  // MCP servers mounted as skills
  | 'mcp_unreachable'
  | 'mcp_timeout'
  | 'mcp_protocol_error';

/** One problem found while validating data against a schema (the shape zod reports). */
export interface Issue {
  /** Where the problem is, from the root of the validated value. */
  path: (string | number)[];
  message: string;
  /** The schema library's own code for the issue, when it has one. */
  code?: string;
}

/** The serialisable form of an error: what results, effects and diagnostics carry. */
export interface ErrorInfo {
  code: ErrorCode;
  message: string;
  /** Name of the skill involved, when there is one. */
  skill?: string;
  /** Name of the action involved, when there is one. */
  action?: string;
  /** Path, pattern or name of the offending thing when it is neither a skill nor an action. */
  subject?: string;
  /** Validation issues, each with its path. */
  issues?: Issue[];
  /** Further machine-readable facts (missing dependencies, the cycle, the reason code...). */
  details?: Record<string, unknown>;
  /**
   * What user code threw, when the error comes from a throw (see `withCause`). Not enumerable:
   * JSON, snapshots and `structuredClone` leave it out, so it never reaches state or a trace line.
   */
  readonly cause?: unknown;
}

/**
 * Attaches what was thrown to `info` as its `cause`, not enumerable (in memory only: the error
 * stays plain data for JSON and snapshots). Returns `info`.
 */
export function withCause<T extends ErrorInfo>(info: T, cause: unknown): T {
  if (cause !== undefined) Object.defineProperty(info, 'cause', { value: cause, enumerable: false, writable: false, configurable: true });
  return info;
}

/** A copy of `info` with `changes` applied, keeping its `cause`. */
export function reworded(info: ErrorInfo, changes: Partial<ErrorInfo>): ErrorInfo {
  return withCause({ ...info, ...changes }, info.cause);
}

/** The one base class for errors skillstate throws. */
export class SkillstateError extends Error {
  readonly code: ErrorCode;
  readonly skill: string | undefined;
  readonly action: string | undefined;
  readonly subject: string | undefined;
  readonly issues: Issue[] | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(info: ErrorInfo, options?: { cause?: unknown }) {
    // What user code threw travels with the info; an explicit cause wins.
    super(info.message, options ?? (info.cause === undefined ? undefined : { cause: info.cause }));
    this.name = new.target.name;
    this.code = info.code;
    this.skill = info.skill;
    this.action = info.action;
    this.subject = info.subject;
    this.issues = info.issues;
    this.details = info.details;
  }

  /** The plain-data form, safe to put in an effect or a snapshot (the cause rides along, not enumerable). */
  toInfo(): ErrorInfo {
    const info = errorInfo(this.code, this.message, {
      skill: this.skill,
      action: this.action,
      subject: this.subject,
      issues: this.issues,
      details: this.details,
    });
    return withCause(info, this.cause);
  }

  toJSON(): ErrorInfo {
    return this.toInfo();
  }
}

/** A signal that is not a valid CloudEvent of ours. */
export class SignalError extends SkillstateError {}
/** A route or pattern rejected by the router. */
export class RouteError extends SkillstateError {}
/** A skill, action or agent definition that cannot work. Thrown when the definition is made. */
export class DefinitionError extends SkillstateError {}
/** An initial state that does not satisfy the agent's schema. Thrown by `definition.new()`. */
export class StateError extends SkillstateError {}

/** Fields of an `ErrorInfo` besides its code and message. */
export type ErrorExtras = Partial<Omit<ErrorInfo, 'code' | 'message'>>;

/** Builds an `ErrorInfo`, leaving out the fields that are undefined so the object stays tidy. */
export function errorInfo(code: ErrorCode, message: string, extras?: ErrorExtras): ErrorInfo {
  const info: ErrorInfo = { code, message };
  if (extras) {
    if (extras.skill !== undefined) info.skill = extras.skill;
    if (extras.action !== undefined) info.action = extras.action;
    if (extras.subject !== undefined) info.subject = extras.subject;
    if (extras.issues !== undefined) info.issues = extras.issues;
    if (extras.details !== undefined) info.details = extras.details;
  }
  return info;
}

/**
 * Throws the `DefinitionError` for one field of an action or skill definition, naming it:
 * `action 'add': input must be a zod object schema`.
 */
export function refuseDefinitionField(kind: 'action' | 'skill', name: unknown, field: string, message: string): never {
  const info: ErrorInfo = { code: kind === 'action' ? 'invalid_action' : 'invalid_skill', message: `${kind} '${String(name)}': ${field} ${message}`, details: { field } };
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
      message: issue.message,
    };
    if (issue.code !== undefined) converted.code = issue.code;
    return converted;
  });
}

/** Formats issues as `path: message; path: message` for a one-line error message. */
export function formatIssues(issues: readonly Issue[]): string {
  return issues
    .map((issue) => (issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}

/** What was thrown, as an error's information: a skillstate error's own, anything else as `fallback` with its words. */
export function toErrorInfo(thrown: unknown, fallback: ErrorCode): ErrorInfo {
  return thrown instanceof SkillstateError ? thrown.toInfo() : errorInfo(fallback, describeThrown(thrown));
}
