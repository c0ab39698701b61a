/**
 * The shape of errors as data: every error code, what each code carries in `details`, and
 * `ErrorInfo`, the union keyed by code that results, effects and diagnostics carry. Adding a
 * code is adding a key to `ErrorDetailsByCode` (and a row to docs/errors.md).
 *
 * Types only: no values, no imports.
 */

/** Why a path inside a skill is refused: absolute, with `..`, malformed, leading outside the root, or not a regular file. */
export type ResourceRefusal = 'absolute' | 'parent' | 'invalid' | 'escapes' | 'not_a_file';

/** Why a script is refused before it runs (`script_refused`'s `details.reason`). */
export type ScriptRefusal = ResourceRefusal | 'missing' | 'no_root' | 'untrusted' | 'arguments' | 'no_interpreter';

/**
 * What each error code carries in `details`, by code: the facts a caller can branch on besides the
 * code. A code mapped to `never` carries no details. `details` stays optional on every error (an
 * error from another process or an older snapshot may lack it), and where a code carries several
 * shapes, `reason` tells them apart. Adding a code is adding a key here.
 */
export interface ErrorDetailsByCode {
  // signals and patterns
  /** `duplicate_call`: a call re-used the id of a call still waiting for its answer. */
  invalid_signal: { reason: 'duplicate_call'; signal: string; type: string };
  invalid_pattern: never;
  invalid_route: never;
  invalid_priority: never;
  guard_failed: never;
  no_route: never;
  // definitions
  /** The definition field at fault. */
  invalid_action: { field: string };
  /** The definition field at fault. */
  invalid_skill: { field: string };
  invalid_agent: never;
  /** The state key and the two skills that both use it. */
  duplicate_state_key: { stateKey: string; skills: string[] };
  /** The state key and who holds it (`skill 'x'`, `the agent 'y' schema`). */
  state_key_conflict: { stateKey: string; takenBy: string };
  invalid_config: never;
  /** `unpersistable`: state that cannot be saved, of one agent (`agent`, and the `path` to the value) or of several (`agents`, each one's error in `errors`). */
  invalid_state:
    | { reason: 'unpersistable'; agent: string; path: (string | number)[] }
    | { reason: 'unpersistable'; agents: string[]; errors: ErrorInfo[] };
  // cmd
  /** A field an instruction does not take (`parms`), the fields it does, and the one it probably meant. */
  invalid_instruction: { field: string; known: string[]; suggestion?: string };
  /** A route's target that no action answers to, with the actions there are. */
  unknown_action: { route: string; available: string[] };
  invalid_params: never;
  /** The action's own `fail(reason, message, details)`: its reason and its details. */
  action_failed: { reason: string; details?: Record<string, unknown> };
  /** A change `result(output, changes)` does not take (`stat`), the changes it does, and the one it probably meant. */
  invalid_output: { field: string; known: string[]; suggestion?: string };
  invalid_state_update: never;
  invalid_effect: never;
  unlinked_agent: never;
  // mount / unmount
  /** The required skills that are not there. */
  missing_dependency: { missing: string[] };
  /** The mounted skills that require the one being unmounted. */
  required_by: { requiredBy: string[] };
  /** The skills in the cycle, the first repeated at the end. */
  dependency_cycle: { cycle: string[] };
  /** `skill_unreadable`: a skill an agent has mounted that this host cannot load. */
  unknown_skill: { reason: 'skill_unreadable' };
  skill_conflict: never;
  /** The config the mounted skill keeps. */
  already_mounted: { config: Record<string, unknown> };
  // runtime
  hook_failed: never;
  /** What a skill's `Decision.fail(message, details)` gave. */
  signal_failed: Record<string, unknown>;
  effect_loop: never;
  skill_failed: never;
  timeout: never;
  /** How many items the mailbox holds. */
  mailbox_full: { capacity: number };
  agent_stopped: never;
  unknown_agent: never;
  duplicate_agent: never;
  invalid_snapshot: never;
  /**
   * Why a durable store failed (`in_use`: closed while a running system writes to it; `closed`: used
   * after it was closed), and its database file (none for a store of your own without a `path` whose
   * write failed).
   */
  store_failed: { reason: 'locked' | 'newer_schema' | 'write_failed' | 'open_failed' | 'in_use' | 'closed'; path?: string };
  invalid_trace: never;
  /**
   * An unknown option (`option`, the `known` ones, a close `suggestion`), an unusable value
   * (`option`, `value`), `tsx_missing`: a TypeScript module given where this Node cannot import it,
   * or `peer_missing`: an optional peer dependency (`package`) that a subpath needs is not installed.
   */
  invalid_options:
    | { option: string; known: string[]; suggestion?: string; reason?: undefined }
    | { option: string; value: unknown; reason?: undefined }
    | { reason: 'tsx_missing' }
    | { reason: 'peer_missing'; package: string };
  /** The abort reason, as text. */
  cancelled: { reason: string };
  // model-driven agents
  model_not_found: never;
  model_unavailable: never;
  /** The provider's HTTP status (`null` when none) and whether it calls the failure retryable. */
  model_failed: { status: number | null; retryable: boolean };
  /** The time-out, in milliseconds. */
  model_timeout: { timeout: number };
  /** The provider's HTTP status and whether it calls the failure retryable. */
  rate_limited: { status: number | null; retryable: boolean };
  /** The limit reached and its value. */
  turn_limit: { limit: 'maxSteps' | 'maxToolCalls'; value: number };
  /** Tokens used and the budget. */
  budget_exceeded: { used: number; budget: number };
  // document skills
  /**
   * What the manifest breaks (`errors`), a SKILL.md over the size limit (`size`, `maxBytes`), or
   * by `reason`: `not_a_file` (with its `kind`), `broken_link` (with its `target`), `escapes` (a
   * link out of the skill's folder, with its real `target`).
   */
  invalid_manifest:
    | { errors: string[]; reason?: undefined }
    | { size: number; maxBytes: number; reason?: undefined }
    | { reason: 'not_a_file'; kind: string }
    | { reason: 'broken_link'; target: string }
    | { reason: 'escapes'; target: string };
  /** The skills there are. */
  skill_not_found: { available: string[] };
  /** Why the path is refused (`unreadable`: the file is there, and this process may not read it); a `not_a_file` names its `kind`. */
  resource_refused: { reason: ResourceRefusal | 'unreadable'; kind?: string };
  /** `missing`: the path does not exist; else the resources the skill has, and a `likely` one differing only in case. */
  resource_not_found: { reason: 'missing' } | { available: string[]; likely?: string; reason?: undefined };
  /**
   * A file of a skill served over MCP that does not match the entry held for it (`size`, `digest`,
   * `frontmatter`), or that the entry does not list (`unlisted`): the content is not used.
   */
  skill_unverified: { reason: 'size' | 'digest' | 'frontmatter' | 'unlisted' | 'missing'; server: string; uri: string };
  /** `tsx_missing`: a TypeScript toolset this Node cannot import. */
  toolset_failed: { reason: 'tsx_missing' };
  /** Why the script is refused. */
  script_refused: { reason: ScriptRefusal };
  /** `tsx_missing`: a TypeScript script this Node cannot run. */
  script_failed: { reason: 'tsx_missing' };
  // MCP servers mounted as skills
  mcp_unreachable: never;
  /** The HTTP status with which the server refused the request's credentials (401 or 403). */
  mcp_unauthorized: { status: number };
  mcp_timeout: never;
  mcp_protocol_error: never;
}

/** Every error code skillstate produces. Stable: match on these, not on messages. */
export type ErrorCode = keyof ErrorDetailsByCode;

/** The `details` of an error of code `C` (`never` where that code carries none). */
export type ErrorDetails<C extends ErrorCode = ErrorCode> = ErrorDetailsByCode[C];

/** One problem found while validating data against a schema (the shape zod reports). */
export interface Issue {
  /** Where the problem is, from the root of the validated value. */
  path: (string | number)[];
  message: string;
  /** The schema library's own code for the issue, when it has one. */
  code?: string;
}

/** What every error carries besides its code and details. */
export interface ErrorFields {
  message: string;
  /** Name of the skill involved, when there is one. */
  skill?: string;
  /** Name of the action involved, when there is one. */
  action?: string;
  /** Path, pattern or name of the offending thing when it is neither a skill nor an action. */
  subject?: string;
  /** Validation issues, each with its path. */
  issues?: Issue[];
  /**
   * What user code threw, when the error comes from a throw (see `withCause`). Not enumerable:
   * JSON, snapshots and `structuredClone` leave it out, so it never reaches state or a trace line.
   */
  readonly cause?: unknown;
}

/**
 * The serialisable form of an error: what results, effects and diagnostics carry. A union keyed by
 * `code`: once `code` is known, `details` has that code's shape (`ErrorDetails`).
 */
export type ErrorInfo<C extends ErrorCode = ErrorCode> = C extends ErrorCode
  ? ErrorFields & {
      code: C;
      /** Further machine-readable facts of this code (missing dependencies, the cycle, the reason...). */
      details?: ErrorDetails<C>;
    }
  : never;
