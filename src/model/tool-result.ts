/**
 * The one place a tool call's outcome becomes what the model reads, whichever host ran the call
 * and whichever step recorded it (as the AI SDK's `createToolModelOutput` is for its own loop):
 * a string as text, anything else as JSON, an error as its code then its message, a refused call
 * as `execution-denied`. A history therefore reads the same on every host, and changing how a
 * result reaches the model is a change here. (The results of tools the provider ran itself are in
 * the model's answer as the AI SDK gives them.)
 */

/** A tool call's error as the model reads it: a stable code and words. */
export interface ToolError {
  code: string;
  message: string;
}

/** How a tool call ended, as far as the model is told. */
export type ToolOutcome =
  | { ok: true; output: unknown }
  | { ok: false; error: ToolError }
  /** A person refused it (`chat.deny`), with their reason when they gave one. */
  | { ok: false; denied: true; reason?: string | undefined };

/** A `tool-result` part of a tool message, in the AI SDK's message shape. */
export interface ToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: Record<string, unknown>;
}

/** The `output` of a tool-result part for `outcome`. */
export function toolResultOutput(outcome: ToolOutcome): Record<string, unknown> {
  if (outcome.ok) {
    const { output } = outcome;
    return typeof output === 'string' ? { type: 'text', value: output } : { type: 'json', value: output === undefined ? null : output };
  }
  if ('denied' in outcome) return { type: 'execution-denied', ...(outcome.reason !== undefined ? { reason: outcome.reason } : {}) };
  return { type: 'error-text', value: `${outcome.error.code}: ${outcome.error.message}` };
}

/** The tool-result part that answers call `toolCallId` of `toolName` with `outcome`. */
export function toolResultPart(call: { toolCallId: string; toolName: string }, outcome: ToolOutcome): ToolResultPart {
  return { type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, output: toolResultOutput(outcome) };
}

/** A failed outcome. */
export function failed(error: ToolError): ToolOutcome {
  return { ok: false, error: { code: error.code, message: error.message } };
}
