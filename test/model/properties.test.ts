/**
 * Whatever a model answers — text, valid and invalid tool calls, unknown tools, calls needing
 * approval, provider errors — after every turn the agent's invariants hold, no turn is left in
 * flight, and the history is valid input for the next model call.
 */
import fc from 'fast-check';
import { modelMessageSchema } from 'ai';
import { describe, expect, it } from 'vitest';
import { chatMessage, createSignal } from '../../src/index.js';
import { checkAgentInvariants, scriptedModel, type ScriptedResponse, type ScriptedToolCall } from '../../src/testing/index.js';
import { systemPerTest } from '../runtime/fixtures.js';
import { assistant, chatOf } from './fixtures.js';

const systems = systemPerTest();
const Assistant = assistant({ retries: 1, maxSteps: 4, maxToolCalls: 6 });

const toolCall: fc.Arbitrary<ScriptedToolCall> = fc.oneof(
  fc.record({ tool: fc.constant('add'), args: fc.record({ a: fc.integer(), b: fc.integer() }) }),
  fc.record({ tool: fc.constant('add'), args: fc.record({ a: fc.string(), b: fc.constant(null) }) }),
  fc.record({ tool: fc.constant('add'), args: fc.constant('{"a": 1,') }),
  fc.record({ tool: fc.constantFrom('teleport', 'audit', 'record_response'), args: fc.constant({}) }),
  fc.record({ tool: fc.constant('balance'), args: fc.record({ explode: fc.boolean() }) }),
  fc.record({ tool: fc.constant('pay'), args: fc.record({ to: fc.constantFrom('Bob', 'Eve'), amount: fc.integer({ min: -5, max: 50 }) }) }),
);

const response: fc.Arbitrary<ScriptedResponse> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ text: fc.string({ maxLength: 40 }) }) },
  { weight: 4, arbitrary: fc.record({ text: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }), toolCalls: fc.array(toolCall, { minLength: 1, maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ error: fc.record({ status: fc.constantFrom(400, 429, 500), message: fc.constant('provider trouble') }) }) },
);

/** Problems of a history as the next model call's input. */
function historyProblems(messages: readonly unknown[]): string[] {
  const problems: string[] = [];
  const open = new Set<string>();
  for (const [i, message] of messages.entries()) {
    const parsed = modelMessageSchema.safeParse(message);
    if (!parsed.success) problems.push(`message ${i} is not a model message: ${parsed.error.message}`);
    const { role, content } = message as { role: string; content: unknown };
    if (!Array.isArray(content)) continue;
    for (const part of content as { type: string; toolCallId?: string }[]) {
      if (part.type === 'tool-call') open.add(part.toolCallId!);
      if (part.type === 'tool-result') {
        if (role !== 'tool') problems.push(`message ${i}: a tool result outside a tool message`);
        if (!open.delete(part.toolCallId!)) problems.push(`message ${i}: a result for '${part.toolCallId}', which no earlier call asked for (or answered twice)`);
      }
    }
  }
  if (open.size) problems.push(`tool calls without a result: ${[...open].join(', ')}`);
  return problems;
}

describe('the conversation under any model answers', () => {
  it('keeps the invariants and a valid history after every turn', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(response, { minLength: 1, maxLength: 8 }), fc.array(fc.boolean(), { maxLength: 8 }), async (script, approvals) => {
        const system = systems.start({ models: { default: scriptedModel(script, { loop: true }) }, onUnhandledDiagnostic: () => {}, onUnhandledError: () => {} });
        const agent = system.spawn(Assistant);
        let decision = 0;
        system.subscribe('chat.turn.approval', (signal) => {
          const { toolCallId } = signal.data as { toolCallId: string };
          const approve = approvals[decision++ % Math.max(1, approvals.length)] ?? true;
          agent.send(createSignal(approve ? 'chat.approve' : 'chat.deny', { toolCallId }));
        });
        for (const text of ['first', 'second', 'third']) {
          await agent.call(chatMessage(text), { timeout: 5_000 }).catch((error: { code?: string }) => {
            expect(['model_failed', 'rate_limited', 'turn_limit']).toContain(error.code);
          });
          expect(checkAgentInvariants(agent)).toEqual([]);
          const chat = chatOf(agent);
          expect(chat.turn).toBeNull();
          expect(historyProblems(chat.messages)).toEqual([]);
        }
        await system.shutdown();
      }),
      { numRuns: 25 },
    );
  }, 60_000);
});
