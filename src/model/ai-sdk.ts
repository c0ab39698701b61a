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
let loaded: AiModule | undefined;

/** The `ai` package, imported once; a clear error when it is not installed. */
export function loadAi(): Promise<AiModule> {
  loading ??= import('ai').then((ai) => (loaded = primeMessageSchema(ai)), (error: unknown) => {
    loading = undefined;
    throw new RuntimeError(
      errorInfo('model_unavailable', `model-driven agents need the AI SDK: run npm install ai (${error instanceof Error ? error.message : String(error)})`),
    );
  });
  return loading;
}

/**
 * The `ai` package once `loadAi` has loaded it, else undefined: a model step after the first
 * takes it as it is, without waiting a turn of the event loop's microtasks for a promise that
 * has long settled.
 */
export function loadedAi(): AiModule | undefined {
  return loaded;
}

/**
 * Every `generateText` and `streamText` call checks its prompt with a new schema built around
 * the SDK's `modelMessageSchema`, and zod 4.6 walks a new schema's whole tree for cycles before
 * its first parse. It keeps its answer for the message schema only once the JSON-value schema
 * inside it, a lazy one, has been resolved, which no message without provider options does:
 * until then every call walks the tree again (about 100 µs of CPU a model step, measured). One
 * parse of a message with provider options resolves it, for every call after. Only speed
 * depends on it: an SDK whose schema is otherwise made is left as it is.
 */
function primeMessageSchema(ai: AiModule): AiModule {
  const schema = (ai as { modelMessageSchema?: { safeParse?: (value: unknown) => unknown } }).modelMessageSchema;
  try {
    schema?.safeParse?.({ role: 'user', content: '', providerOptions: { any: { value: null } } });
  } catch {
    // A schema that cannot parse this is of another make: nothing to prime.
  }
  return ai;
}

/** A model as the SDK's functions take it: every `ChatModel` is a provider's language model. */
export function sdkModel(model: ChatModel): Exclude<LanguageModel, string> {
  return model as Exclude<LanguageModel, string>;
}
