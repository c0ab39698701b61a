/**
 * Models as the system knows them: AI SDK language models by name, the `ai` package loaded on
 * first use (it is an optional peer dependency: systems without model-driven agents never load
 * it), and compactors by name.
 */
import type { LanguageModel } from 'ai';
import { errorInfo } from '../core/errors.js';
import { RuntimeError } from '../runtime/errors.js';
import type { ChatMessage } from './conversation.js';

/**
 * A language model of the AI SDK (any provider: OpenAI, Anthropic, Google, Ollama...). The
 * system knows it by name, so the agent's state names it and stays plain data.
 */
export type ChatModel = Exclude<LanguageModel, string>;

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

/** The AI SDK's functions the loop uses. */
export type AiModule = typeof import('ai');

let loading: Promise<AiModule> | undefined;

/** The `ai` package, imported once; a clear error when it is not installed. */
export function loadAi(): Promise<AiModule> {
  loading ??= import('ai').catch((error: unknown) => {
    loading = undefined;
    throw new RuntimeError(
      errorInfo('model_unavailable', `model-driven agents need the AI SDK: run npm install ai (${error instanceof Error ? error.message : String(error)})`),
    );
  });
  return loading;
}
