/**
 * A language model's two methods, `doGenerate` (the answer whole) and `doStream` (the answer as
 * it comes), and how a model says it lacks one: what a step does then is `askModel`'s; the
 * words for it are here.
 */
import type { ChatModel } from './models.js';

/** A language model's two ways to answer: whole, or streamed. */
export type ModelMethod = 'doGenerate' | 'doStream';

/**
 * Whether `error` is how a model says it lacks a method: the AI SDK's mock models
 * (`MockLanguageModelV3` from `ai/test`) throw `Error('Not implemented')` from a method they
 * were not given. Any other failure of the method is the model's answer, and is not replaced.
 */
export function notImplemented(error: unknown): boolean {
  return error instanceof Error && error.message === 'Not implemented';
}

/** Why a model that implements neither method cannot answer, and what to give it. */
export function neitherMethod(model: ChatModel): string {
  return `model '${model.provider}:${model.modelId}' implements neither doGenerate nor doStream (both throw 'Not implemented'): give the mock model a doGenerate (or a doStream) that answers`;
}

/**
 * What a step reports when the answer was asked for streamed and the model does not stream: it
 * came whole from `doGenerate`, and the conversation's `stream: false` asks for it that way.
 */
export function notStreamed(model: ChatModel): string {
  return `model '${model.provider}:${model.modelId}' does not implement doStream ('Not implemented'): its answers come whole from doGenerate, as one chat.delta; set the conversation's stream: false to ask doGenerate directly`;
}
