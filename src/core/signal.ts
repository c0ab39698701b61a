/**
 * Signals: CloudEvents 1.0 envelopes as plain objects. A signal's `type` is a dot-separated
 * list of segments (`calculator.add`, `user.profile.updated`) that routes and patterns match.
 *
 * Pure: no I/O, no XState.
 */
import { errorInfo, SignalError } from './errors.js';
import { unknownOption } from './options.js';
import { randomId } from './id.js';

/** A CloudEvents 1.0 event. Plain data: it round-trips through JSON unchanged. */
export interface Signal<TData = unknown> {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  time: string;
  data?: TData;
  subject?: string;
  datacontenttype?: string;
  /**
   * The W3C Trace Context of the work that sent the signal (CloudEvents' distributed tracing
   * extension): an agent taking the signal continues that trace. Set by the runtime when
   * OpenTelemetry tracing is on (docs/observability.md).
   */
  traceparent?: string;
  /** Vendor trace state going with `traceparent`. */
  tracestate?: string;
}

/** What the router and the matcher need of a signal. */
export interface SignalLike {
  type: string;
  data?: unknown;
}

/** Options of `createSignal`: the source, subject and id of the signal. */
export interface CreateSignalOptions {
  /** Where the signal comes from (CloudEvents `source`). Default `skillstate`. */
  source?: string;
  subject?: string;
  /** Overrides the generated id (21 characters of nanoid's URL-safe alphabet). */
  id?: string;
  /** Overrides the timestamp; default now, as an ISO 8601 string. */
  time?: string | Date;
  datacontenttype?: string;
}

/** The options `createSignal` takes: one entry per key of `CreateSignalOptions`. */
const SIGNAL_OPTIONS = { source: true, subject: true, id: true, time: true, datacontenttype: true } as const satisfies Record<keyof CreateSignalOptions, true>;

/** The longest signal type accepted, in characters. Longer types are rejected, not truncated. */
export const MAX_SIGNAL_TYPE_LENGTH = 2048;

const SEGMENT = /^[A-Za-z0-9_-]+$/;
const SIGNAL_TYPE = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;

/**
 * Splits a signal type into its segments, or returns undefined when the type is invalid
 * (empty, an empty segment, a character outside `[A-Za-z0-9_-]`, or too long).
 */
export function signalTypeSegments(type: unknown): string[] | undefined {
  if (typeof type !== 'string' || type.length === 0 || type.length > MAX_SIGNAL_TYPE_LENGTH) {
    return undefined;
  }
  return SIGNAL_TYPE.test(type) ? type.split('.') : undefined;
}

const SEGMENT_CACHE_LIMIT = 4096;
const segmentCache = new Map<string, readonly string[] | null>();
let lastType: string | undefined;
let lastSegments: readonly string[] | undefined;

/**
 * `signalTypeSegments` with a bounded cache: the set of signal types an application uses is
 * small and repeats, and splitting plus validating costs more than a lookup. The arrays are
 * shared and frozen.
 */
export function cachedSignalTypeSegments(type: unknown): readonly string[] | undefined {
  // The type asked about last, first: a signal's type is asked about by its creation, its
  // check on sending and its routing, one after the other.
  if (type === lastType) return lastSegments;
  if (typeof type !== 'string') return undefined;
  let segments = segmentCache.get(type);
  if (segments === undefined) {
    const split = signalTypeSegments(type);
    segments = split ? Object.freeze(split) : null;
    if (segmentCache.size >= SEGMENT_CACHE_LIMIT) segmentCache.clear();
    segmentCache.set(type, segments);
  }
  lastType = type;
  lastSegments = segments ?? undefined;
  return lastSegments;
}

/** True when `type` is a valid signal type (answered from the segment cache: every signal is checked at least twice). */
export function isValidSignalType(type: unknown): type is string {
  return cachedSignalTypeSegments(type) !== undefined;
}

function describeTypeProblem(type: unknown): string {
  if (typeof type !== 'string') return `a signal type must be a string, got ${typeof type}`;
  if (type.length === 0) return 'a signal type must not be empty';
  if (type.length > MAX_SIGNAL_TYPE_LENGTH) {
    return `signal type is ${type.length} characters long; the limit is ${MAX_SIGNAL_TYPE_LENGTH}`;
  }
  const bad = type.split('.').find((segment) => !SEGMENT.test(segment));
  if (bad === '') return `signal type '${type}' has an empty segment`;
  return `signal type '${type}' has an invalid segment '${bad}' (allowed: ASCII letters, digits, '_' and '-')`;
}

/**
 * Creates a signal. Throws a `SignalError` (code `invalid_signal`) when the type or an option
 * is invalid, naming the culprit.
 *
 * @example createSignal('calculator.add', { a: 1, b: 2 })
 */
export function createSignal<TData = undefined>(
  type: string,
  data?: TData,
  options?: CreateSignalOptions,
): Signal<TData> {
  if (!isValidSignalType(type)) {
    throw new SignalError({ code: 'invalid_signal', message: describeTypeProblem(type), subject: String(type) });
  }
  if (options !== undefined) {
    // A misspelled option (`sourc`) would leave the default in its place without a word.
    const unknown = typeof options === 'object' && options !== null ? unknownOption('createSignal', options, SIGNAL_OPTIONS) : errorInfo('invalid_options', `createSignal takes an options object such as { source }, got ${typeof options}`);
    if (unknown) throw new SignalError({ ...unknown, message: `signal '${type}': ${unknown.message}` });
  }
  const source = options?.source ?? 'skillstate';
  if (typeof source !== 'string' || source.length === 0) {
    throw new SignalError({
      code: 'invalid_signal',
      message: `signal '${type}' needs a non-empty source`,
      subject: type,
    });
  }
  const id = options?.id ?? randomId();
  if (typeof id !== 'string' || id.length === 0) {
    throw new SignalError({ code: 'invalid_signal', message: `signal '${type}' needs a non-empty string id`, subject: type });
  }
  const time = signalTime(type, options?.time);
  const signal: Signal<TData> = { specversion: '1.0', id, source, type, time };
  if (data !== undefined) signal.data = data;
  if (options?.subject !== undefined) signal.subject = options.subject;
  if (options?.datacontenttype !== undefined) signal.datacontenttype = options.datacontenttype;
  else if (data !== undefined) signal.datacontenttype = 'application/json';
  return signal;
}

/** The current time as an ISO 8601 string, formatted once per millisecond: signals are made by the thousand. */
let lastMillis = Number.NaN;
let lastIso = '';
function now(): string {
  const millis = Date.now();
  if (millis !== lastMillis) {
    lastMillis = millis;
    lastIso = new Date(millis).toISOString();
  }
  return lastIso;
}

/** The signal's time as an ISO 8601 string; an invalid Date or an unparseable string is refused. */
function signalTime(type: string, time: unknown): string {
  if (time === undefined) return now();
  const parsed = time instanceof Date ? time : typeof time === 'string' ? new Date(time) : undefined;
  if (parsed === undefined || Number.isNaN(parsed.getTime())) {
    throw new SignalError({
      code: 'invalid_signal',
      message: `signal '${type}' has time ${JSON.stringify(String(time))}, which is not a timestamp (give a Date or an ISO 8601 string)`,
      subject: type,
    });
  }
  return time instanceof Date ? time.toISOString() : (time as string);
}

/**
 * Checks that an untrusted value is a signal we can process, and says why not otherwise.
 * Returns undefined when it is valid.
 */
export function signalProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'a signal must be an object';
  const candidate = value as Partial<Signal>;
  if (!isValidSignalType(candidate.type)) return describeTypeProblem(candidate.type);
  if (candidate.specversion !== undefined && candidate.specversion !== '1.0') {
    return `signal '${candidate.type}' has specversion '${String(candidate.specversion)}'; only '1.0' is supported`;
  }
  if (candidate.id !== undefined && (typeof candidate.id !== 'string' || candidate.id.length === 0)) {
    return `signal '${candidate.type}' needs a non-empty string id`;
  }
  if (candidate.source !== undefined && (typeof candidate.source !== 'string' || candidate.source.length === 0)) {
    return `signal '${candidate.type}' needs a non-empty source`;
  }
  if (candidate.time !== undefined && !isTimestamp(candidate.time)) {
    return `signal '${candidate.type}' has time ${JSON.stringify(String(candidate.time))}, which is not a timestamp (give a Date or an ISO 8601 string)`;
  }
  return undefined;
}

/** The last time string found to be a timestamp: signals made within one millisecond share theirs. */
let lastTimestamp: string | undefined;

function isTimestamp(time: unknown): boolean {
  if (time === lastTimestamp) return true;
  if (time instanceof Date) return !Number.isNaN(time.getTime());
  if (typeof time !== 'string' || Number.isNaN(new Date(time).getTime())) return false;
  lastTimestamp = time;
  return true;
}

/** Accepts a full signal or `{ type, data }` and fills in the CloudEvents fields. */
export function toSignal(value: Signal | SignalLike | string): Signal {
  if (typeof value === 'string') return createSignal(value);
  const problem = signalProblem(value);
  if (problem) {
    const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
    throw new SignalError({ code: 'invalid_signal', message: problem, subject: typeof type === 'string' ? type : String(value) });
  }
  const candidate = value as Partial<Signal> & SignalLike;
  if (
    candidate.specversion === '1.0' &&
    typeof candidate.id === 'string' &&
    typeof candidate.source === 'string' &&
    typeof candidate.time === 'string'
  ) {
    return candidate as Signal;
  }
  const options: CreateSignalOptions = {};
  if (typeof candidate.source === 'string') options.source = candidate.source;
  if (typeof candidate.id === 'string') options.id = candidate.id;
  if (typeof candidate.time === 'string') options.time = candidate.time;
  if (typeof candidate.subject === 'string') options.subject = candidate.subject;
  if (typeof candidate.datacontenttype === 'string') options.datacontenttype = candidate.datacontenttype;
  const signal = createSignal(candidate.type, candidate.data, options);
  // The trace it continues, when the sender gave one.
  if (typeof candidate.traceparent === 'string') signal.traceparent = candidate.traceparent;
  if (typeof candidate.tracestate === 'string') signal.tracestate = candidate.tracestate;
  return signal;
}
