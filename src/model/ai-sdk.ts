/**
 * The `ai` package as the model loop uses it, loaded on first use: it is an optional peer
 * dependency, and systems without model-driven agents never load it. The public types
 * (models.ts) do not name it; this module, which does, is the loop's own.
 */
import type { LanguageModel } from 'ai';
import { errorInfo } from '../core/errors.js';
import { RuntimeError } from '../core/runtime-error.js';
import type { ChatModel } from './models.js';

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

/** A model as the SDK's functions take it: every `ChatModel` is a provider's language model. */
export function sdkModel(model: ChatModel): Exclude<LanguageModel, string> {
  return model as Exclude<LanguageModel, string>;
}
