/**
 * What a user opts into recording on spans beyond names, ids, counts and codes: the prompts,
 * completions and tool arguments and results of model turns. Off unless asked for, since they
 * hold what users and tools said; when on, a redactor can change or drop each value before it
 * leaves the process, as the inspector's `redact` does for its stream.
 */
import { DefinitionError, errorInfo } from '../core/errors.js';

/** Which content a value is: the GenAI semantic conventions' attribute it is recorded as. */
export type TelemetryContentKind = 'gen_ai.system_instructions' | 'gen_ai.input.messages' | 'gen_ai.output.messages' | 'gen_ai.tool.call.arguments' | 'gen_ai.tool.call.result';

/**
 * Changes a value before it is recorded on a span: returns what to record (a string is recorded
 * as is, anything else as JSON), or undefined to record nothing.
 */
export type TelemetryRedactor = (value: unknown, kind: TelemetryContentKind) => unknown;

/** The `telemetry` option of `createAgentSystem` (and of the Restate host): what spans may hold. */
export interface TelemetryOptions {
  /**
   * Record prompts, completions, and tool arguments and results on the model turn's spans.
   * `false` (default): never. `true`: as they are. A function: what it returns for each value.
   */
  recordContent?: boolean | TelemetryRedactor;
}

/** How content is recorded: undefined for not at all. */
export type ContentRecorder = ((value: unknown, kind: TelemetryContentKind) => string | undefined) | undefined;

/** The recorder of `options`, checked: a wrong value is an `invalid_options` error naming it. */
export function contentRecorder(options: TelemetryOptions | undefined): ContentRecorder {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null) {
    throw new DefinitionError(errorInfo('invalid_options', `telemetry must be an object such as { recordContent: true }, not ${typeof options}`, { subject: 'telemetry', details: { option: 'telemetry', value: String(options) } }));
  }
  const unknown = Object.keys(options).find((key) => key !== 'recordContent');
  if (unknown !== undefined) {
    throw new DefinitionError(errorInfo('invalid_options', `unknown option '${unknown}' (telemetry options are: recordContent)`, { subject: unknown, details: { option: unknown, known: ['recordContent'] } }));
  }
  const record = options.recordContent;
  if (record === undefined || record === false) return undefined;
  if (record === true) return encoded;
  if (typeof record === 'function') {
    return (value, kind) => {
      const redacted = record(value, kind);
      return redacted === undefined ? undefined : encoded(redacted);
    };
  }
  throw new DefinitionError(errorInfo('invalid_options', `telemetry.recordContent must be true, false or a function, not ${typeof record}`, { subject: 'recordContent', details: { option: 'recordContent', value: String(record) } }));
}

/** A value as an attribute: a string as it is, anything else as JSON. */
function encoded(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
