/**
 * Models as the system knows them: AI SDK language models by name, and compactors by name. The
 * types here name no type of the `ai` package, an optional peer dependency: an application
 * without it compiles against them (the loop's own use of the SDK is in ai-sdk.ts).
 */
import type { ChatMessage } from './conversation.js';

/**
 * A language model of the AI SDK (any provider: OpenAI, Anthropic, Google, Ollama...). The
 * system knows it by name, so the agent's state names it and stays plain data.
 *
 * Declared by the members every AI SDK language model has (of any specification version), not
 * as the SDK's `LanguageModel`, so that these types compile without `ai` installed. Every
 * provider's model is one; to hand one to the SDK's own functions, it is a `LanguageModel`
 * (`model as LanguageModel`).
 */
export interface ChatModel {
  readonly specificationVersion: string;
  readonly provider: string;
  readonly modelId: string;
  doGenerate(options: never): PromiseLike<unknown>;
  doStream(options: never): PromiseLike<unknown>;
}

/** What a compactor gets: the history, and where the part it must keep begins. */
export interface CompactionRequest {
  agent: string;
  messages: readonly ChatMessage[];
  /** Messages before this index are to be summarised or dropped; from it on, they are kept. */
  keepFrom: number;
  /** The agent's model, to summarise with. */
  model: ChatModel;
  abortSignal: AbortSignal;
}

/** Summarises the older part of a history: returns the summary, or nothing to drop it. */
export type Compactor = (request: CompactionRequest) => Promise<{ summary?: string }> | { summary?: string };
