/**
 * The summary of the older part of a history, written by the agent's own model: the `summarize`
 * strategy of compaction, the same on every host. Asked through the AI SDK's `generateText`; a
 * model that only streams (`doGenerate` not implemented) writes it through its stream instead.
 */
import type { ChatMessage, ChatUsage, ConversationSettings } from './conversation.js';
import { SUMMARY_INSTRUCTIONS, transcript } from './model-call.js';
import { notImplemented } from './model-methods.js';
import { askModel, usageOf } from './model-step.js';
import { sdkModel, type AiModule } from './ai-sdk.js';
import { untilAborted } from './step-abort.js';
import type { ChatModel } from './models.js';

/** A summary and what writing it cost (it counts against the agent's token budget like any model call). */
export interface HistorySummary {
  text: string;
  usage: ChatUsage;
}

/** Summarises `older` (the messages compaction removes) with `model`. Throws what the model throws. */
export async function summarizeHistory(ai: AiModule, model: ChatModel, older: readonly ChatMessage[], settings: ConversationSettings, abortSignal: AbortSignal): Promise<HistorySummary> {
  const prompt = transcript(older);
  try {
    const result = await untilAborted(ai.generateText({ model: sdkModel(model), system: SUMMARY_INSTRUCTIONS, prompt, maxRetries: settings.retries, abortSignal }), abortSignal);
    return { text: result.text, usage: usageOf(result.usage) };
  } catch (error) {
    if (!notImplemented(error)) throw error;
  }
  const answer = await askModel(model, { system: SUMMARY_INSTRUCTIONS, messages: [{ role: 'user', content: prompt }], tools: [], abortSignal, onText: () => {} });
  const text = answer.content.flatMap((part) => (part.type === 'text' ? [String(part.text)] : [])).join('');
  return { text, usage: answer.usage };
}
