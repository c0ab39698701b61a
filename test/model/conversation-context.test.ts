/**
 * The conversation's actions are functions of their params and their context: the time a turn
 * starts, the ids it makes and whether a tool's answer came too late are read from the action's
 * context, never from the machine's own clock or id generator.
 */
import { describe, expect, it } from 'vitest';
import { isActionResult } from '../../src/core/action.js';
import { conversation, type ActionContext, type ActionResult } from '../../src/index.js';
import { CONVERSATION, conversationConfigSchema, conversationSchema, type ConversationState } from '../../src/model/conversation.js';

/** A context at time `now` (epoch ms) whose ids are `id-1`, `id-2`, ... */
function contextAt(now: number, skillState: ConversationState = conversationSchema.parse({})): ActionContext<ConversationState, unknown> {
  let made = 0;
  return {
    agentId: 'chat-1',
    state: { [CONVERSATION]: skillState },
    skillState,
    config: conversationConfigSchema.parse({}),
    skill: CONVERSATION,
    signal: undefined,
    now: () => now,
    newId: () => `id-${++made}`,
    abortSignal: new AbortController().signal,
  };
}

function run(name: string, params: Record<string, unknown>, ctx: ActionContext<ConversationState, unknown>): ActionResult<unknown, ConversationState> {
  const action = conversation.actions.find((candidate) => candidate.name === name)!;
  const returned = action.run(params as never, ctx as never);
  if (!isActionResult(returned)) throw new Error(`${name} did not return a result: ${JSON.stringify(returned)}`);
  return returned as ActionResult<unknown, ConversationState>;
}

/** The conversation's state after `message` at time `now`. */
function startedAt(now: number): ConversationState {
  const started = run('message', { text: 'hello' }, contextAt(now));
  return { ...conversationSchema.parse({}), ...started.state } as ConversationState;
}

describe('the conversation reads the time and ids from its context', () => {
  it('a turn takes its id and start time from the context, and its started signal too', () => {
    const started = run('message', { text: 'hello' }, contextAt(Date.UTC(2030, 0, 2, 3, 4, 5)));
    expect(started.state?.turn).toMatchObject({ n: 1, id: 'id-1', startedAt: '2030-01-02T03:04:05.000Z' });
    const [signal] = (started.effects ?? []).map((effect) => (effect as { signal: { id: string; time: string; type: string } }).signal);
    expect(signal).toMatchObject({ type: 'chat.turn.started', id: 'id-1', time: '2030-01-02T03:04:05.000Z' });
  });

  it('a tool answer is late by the context’s clock, whatever the machine’s clock says', () => {
    // A time-out far in the past: answered before it by the context's clock, so not late.
    const until = Date.UTC(2000, 0, 1);
    const state = startedAt(until - 10);
    const call = { turn: 1, toolCallId: 'c1', tool: 'lookup', args: {}, output: 42, until };
    const inTime = run('record_tool_call', call, contextAt(until, state));
    expect(inTime.state?.turn?.ran).toEqual([{ toolCallId: 'c1', tool: 'lookup', args: {}, output: 42 }]);
    const late = run('record_tool_call', call, contextAt(until + 1, state));
    expect(late.state?.turn?.ran).toEqual([{ toolCallId: 'c1', tool: 'lookup', args: {}, output: null, error: { code: 'timeout', message: "tool 'lookup' answered after its time-out" } }]);
  });

  it('a model step recorded with its last call puts that call’s result among the step’s, in the order asked, late by the context’s clock', () => {
    const until = Date.UTC(2000, 0, 1);
    const state = startedAt(until - 10);
    const result = (id: string, value: unknown) => ({ type: 'tool-result', toolCallId: id, toolName: 'lookup', output: { type: 'json', value } });
    const asked = ['c1', 'c2', 'c3'].map((id) => ({ type: 'tool-call', toolCallId: id, toolName: 'lookup', input: {} }));
    // c2 ran last (the step recording it all); c1 ran before it, c3 was refused.
    const step = {
      turn: 1,
      messages: [{ role: 'assistant', content: asked }, { role: 'tool', content: [result('c1', 1), result('c3', 3)] }],
      usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      calls: 3,
      pending: [],
      ranLast: { at: 1, toolCallId: 'c2', tool: 'lookup', until },
      output: 2,
    };
    const toolMessage = (recorded: ActionResult<unknown, ConversationState>) => recorded.state?.messages?.at(-1)?.content as { toolCallId: string; output: unknown }[];
    const inTime = run('record_step', step, contextAt(until, state));
    expect(toolMessage(inTime).map((part) => [part.toolCallId, part.output])).toEqual([
      ['c1', { type: 'json', value: 1 }],
      ['c2', { type: 'json', value: 2 }],
      ['c3', { type: 'json', value: 3 }],
    ]);
    expect(inTime.state?.turn).toMatchObject({ status: 'thinking', steps: 1, toolCalls: 3, ran: [] });
    const late = run('record_step', step, contextAt(until + 1, state));
    expect(toolMessage(late)[1]).toEqual({ type: 'tool-result', toolCallId: 'c2', toolName: 'lookup', output: { type: 'error-text', value: "timeout: tool 'lookup' answered after its time-out" } });
    const failing = run('record_step', { ...step, output: undefined, error: { code: 'quota', message: 'over quota' } }, contextAt(until, state));
    expect(toolMessage(failing)[1]!.output).toEqual({ type: 'error-text', value: 'quota: over quota' });
  });
});
