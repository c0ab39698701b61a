/**
 * The turn engine: the moves of a model turn, decided from plain data. Both hosts carry these
 * moves out (the shared host cases run them end to end); here each decision is checked alone.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { conversationConfigSchema, type ConversationSettings, type PendingToolCall, type TurnRecord } from '../../src/model/conversation.js';
import type { ModelProblem, ModelTools } from '../../src/model/model-call.js';
import type { AskedCall } from '../../src/model/model-step.js';
import { toolResultOutput } from '../../src/model/tool-result.js';
import { afterModelFailure, compactedSummary, compactRecord, lateError, nextMove, planCalls, toolFailure, type TurnView } from '../../src/model/turn-engine.js';
import { errorInfo } from '../../src/core/errors.js';

const settings = (config: Record<string, unknown> = {}): ConversationSettings => conversationConfigSchema.parse(config);

function turn(changes: Partial<TurnRecord> = {}): TurnRecord {
  return { n: 1, id: 't1', status: 'thinking', replyTo: null, query: 'hi', steps: 0, toolCalls: 0, pending: [], ran: [], startedAt: '2026-01-01T00:00:00.000Z', ...changes };
}

function view(changes: Partial<TurnView> = {}): TurnView {
  return Object.freeze({
    agentId: 'ada',
    turn: turn(),
    messages: [{ role: 'user' as const, content: 'hi' }],
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    settings: settings(),
    models: ['default'],
    modelHint: 'give it a model',
    compacted: false,
    ...changes,
  });
}

const call = (id: string, changes: Partial<PendingToolCall> = {}): PendingToolCall => ({ toolCallId: id, tool: 'add', args: {}, approval: 'none', ...changes });
const asked = (id: string, tool = 'add', problem?: AskedCall['problem']): AskedCall => ({ toolCallId: id, toolName: tool, input: {}, ...(problem ? { problem } : {}) });
const tools = (needApproval: string[] = []): ModelTools => ({
  tools: [],
  approval: new Set(needApproval),
  preApprovals: { byTool: new Map(), diagnostics: [] },
});

/** A history of `turns` user turns of about `size` characters each. */
function history(turns: number, size: number) {
  return Array.from({ length: turns }, (_, i) => [
    { role: 'user' as const, content: `question ${i} ${'x'.repeat(size)}` },
    { role: 'assistant' as const, content: [{ type: 'text', text: 'answer' }] },
  ]).flat();
}

describe('nextMove', () => {
  it('waits while a call waits for approval', () => {
    expect(nextMove(view({ turn: turn({ status: 'awaiting-approval', pending: [call('c1', { approval: 'needed' })] }) }))).toEqual({ kind: 'wait' });
  });

  it('runs the next call when acting, records a denied one without running it', () => {
    const approved = call('c1', { approval: 'approved' });
    expect(nextMove(view({ turn: turn({ status: 'acting', toolCalls: 1, pending: [approved] }) }))).toEqual({ kind: 'run', call: approved });
    const denied = call('c2', { approval: 'denied', reason: 'no' });
    expect(nextMove(view({ turn: turn({ status: 'acting', toolCalls: 1, pending: [denied] }) }))).toEqual({ kind: 'deny', call: denied });
  });

  it('fails the turn rather than run a call past maxToolCalls', () => {
    const move = nextMove(view({ settings: settings({ maxToolCalls: 2 }), turn: turn({ status: 'acting', toolCalls: 3, pending: [call('c3')] }) }));
    expect(move).toMatchObject({ kind: 'fail', error: { code: 'turn_limit', details: { limit: 'maxToolCalls', value: 2 } } });
  });

  it('settles a step whose calls ran but whose record is missing, before anything else', () => {
    const ran = [{ toolCallId: 'c1', tool: 'add', args: {}, output: 3 }];
    expect(nextMove(view({ turn: turn({ ran }), usage: { inputTokens: 0, outputTokens: 0, totalTokens: 10 ** 9 }, settings: settings({ maxTokens: 10 }) }))).toEqual({ kind: 'settle' });
  });

  it('fails with budget_exceeded before any model call once the budget is used', () => {
    const move = nextMove(view({ settings: settings({ maxTokens: 100 }), usage: { inputTokens: 60, outputTokens: 40, totalTokens: 100 } }));
    expect(move).toEqual({ kind: 'fail', error: errorInfo('budget_exceeded', "agent 'ada' has used 100 tokens of its budget of 100", { details: { used: 100, budget: 100 } }) });
  });

  it('fails with model_not_found naming the models the host knows, or the hint when it knows none', () => {
    expect(nextMove(view({ settings: settings({ model: 'big' }), models: ['default', 'small'] }))).toMatchObject({
      kind: 'fail',
      error: { code: 'model_not_found', subject: 'big', message: expect.stringContaining('known models: default, small') },
    });
    expect(nextMove(view({ models: [] }))).toMatchObject({ kind: 'fail', error: { message: expect.stringContaining('give it a model') } });
  });

  it('compacts a history over its budget, keeping the latest turns; then asks without compacting again', () => {
    const messages = history(4, 400);
    const over = view({ messages, settings: settings({ history: { maxTokens: 100, keepTurns: 2 } }) });
    expect(nextMove(over)).toMatchObject({ kind: 'compact', remove: 4, strategy: 'summarize' });
    expect(nextMove({ ...over, compacted: true })).toEqual({ kind: 'ask', notes: [] });
  });

  it('asks, with a warning, when only the turns it must keep are left over the budget', () => {
    const move = nextMove(view({ messages: history(1, 2_000), settings: settings({ history: { maxTokens: 100, keepTurns: 2 } }) }));
    expect(move).toMatchObject({ kind: 'ask', notes: [{ code: 'history_over_budget', level: 'warning' }] });
  });

  it('asks the model otherwise, and decides the same from the same view', () => {
    const same = view();
    expect(nextMove(same)).toEqual({ kind: 'ask', notes: [] });
    expect(nextMove(same)).toEqual(nextMove(view()));
  });
});

describe('planCalls', () => {
  const answer = (calls: AskedCall[]) => ({ calls });

  it('runs calls in the step while none needs approval, up to maxToolCalls; the rest wait, in order', () => {
    const plans = planCalls(answer([asked('a'), asked('b'), asked('c')]), tools(), turn({ toolCalls: 1 }), settings({ maxToolCalls: 3 }), true);
    expect(plans.map((plan) => [plan.kind, plan.call.toolCallId])).toEqual([['run', 'a'], ['run', 'b'], ['wait', 'c']]);
  });

  it('runs none in the step when a tool of the agent needs approval, or the host runs each as a step of its own', () => {
    const calls = answer([asked('a'), asked('b', 'wire')]);
    const withApproval = planCalls(calls, tools(['wire']), turn(), settings(), true);
    expect(withApproval).toMatchObject([{ kind: 'wait', call: { toolCallId: 'a', needsApproval: false } }, { kind: 'wait', call: { toolCallId: 'b', needsApproval: true } }]);
    expect(planCalls(calls, tools(), turn(), settings(), false).map((plan) => plan.kind)).toEqual(['wait', 'wait']);
  });

  it('refuses a call that cannot run where it stands, and the others keep their order', () => {
    const problem = { code: 'unknown_action' as const, message: "Model tried to call unavailable tool 'teleport'." };
    const plans = planCalls(answer([asked('a'), asked('b', 'teleport', problem), asked('c')]), tools(), turn(), settings(), true);
    expect(plans.map((plan) => plan.kind)).toEqual(['run', 'refuse', 'run']);
  });
});

describe('afterModelFailure', () => {
  const problem = (retryable: boolean, retryAfter?: number): ModelProblem => ({ retryable, error: errorInfo('model_failed', 'down'), ...(retryAfter !== undefined ? { retryAfter } : {}) });

  it('tries again after a doubling wait while retries are left, and fails after the last', () => {
    const config = settings({ retries: 2, retryDelay: 100 });
    expect(afterModelFailure('ada', 1, problem(true), 0, config)).toMatchObject({ kind: 'retry', wait: 100, note: { code: 'model_retry', message: expect.stringContaining('retry 1 of 2') } });
    expect(afterModelFailure('ada', 1, problem(true), 1, config)).toMatchObject({ kind: 'retry', wait: 200 });
    expect(afterModelFailure('ada', 1, problem(true), 2, config)).toEqual({ kind: 'fail', error: problem(true).error });
  });

  it("waits what the provider asked, and fails at once when trying again cannot help", () => {
    expect(afterModelFailure('ada', 1, problem(true, 5_000), 0, settings())).toMatchObject({ kind: 'retry', wait: 5_000 });
    expect(afterModelFailure('ada', 1, problem(false), 0, settings())).toMatchObject({ kind: 'fail' });
  });
});

describe('what the model reads of a tool call', () => {
  it('a string as text, anything else as JSON, an error as its code then its message, a refusal as execution-denied', () => {
    expect(toolResultOutput({ ok: true, output: 'ledger of 3' })).toEqual({ type: 'text', value: 'ledger of 3' });
    expect(toolResultOutput({ ok: true, output: { total: 3 } })).toEqual({ type: 'json', value: { total: 3 } });
    expect(toolResultOutput({ ok: true, output: undefined })).toEqual({ type: 'json', value: null });
    expect(toolResultOutput({ ok: false, error: { code: 'too_big', message: '1001 is too much' } })).toEqual({ type: 'error-text', value: 'too_big: 1001 is too much' });
    expect(toolResultOutput({ ok: false, denied: true, reason: 'not today' })).toEqual({ type: 'execution-denied', reason: 'not today' });
    expect(toolResultOutput({ ok: false, denied: true })).toEqual({ type: 'execution-denied' });
  });

  it('a late call names the tool the model called, never the action behind it', () => {
    expect(lateError('ada', 'ledger_add', settings({ toolTimeout: 50 }))).toEqual({ code: 'timeout', message: "tool 'ledger_add' of agent 'ada' gave no answer within 50 ms" });
  });

  it("a failed action's words lose the \"action '…' failed: \" its step puts first, and its own reason becomes the code", () => {
    const info = errorInfo('action_failed', "action 'add' failed: 1001 is too much", { action: 'add', details: { reason: 'too_big' } });
    expect(toolFailure(info)).toEqual({ code: 'too_big', message: '1001 is too much' });
  });

  it('the same encoder serves every path: neither host nor the conversation words a result itself', () => {
    for (const file of ['src/model/driver.ts', 'src/restate/turns.ts', 'src/model/conversation.ts', 'src/model/model-step.ts']) {
      const source = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
      expect(source, file).not.toMatch(/type: '(error-text|error-json|execution-denied)'|type: 'json', value|type: 'text', value/);
    }
  });
});

describe('compaction', () => {
  it("takes a compactor's summary, or nothing, and refuses anything else naming the compactor", () => {
    expect(compactedSummary('mine', undefined)).toBeUndefined();
    expect(compactedSummary('mine', {})).toBeUndefined();
    expect(compactedSummary('mine', { summary: 'earlier' })).toBe('earlier');
    expect(() => compactedSummary('mine', 42)).toThrow("compactor 'mine' returned number; it must return { summary } (a string) or nothing");
    expect(() => compactedSummary('mine', { summary: 42 })).toThrow("compactor 'mine' returned a summary of type number; a summary must be a string");
  });

  it("records the summary request's usage with the compaction, so it counts against the budget", () => {
    expect(compactRecord(4, 'earlier', { inputTokens: 5, outputTokens: 2, totalTokens: 7 }, false)).toEqual({ remove: 4, summary: 'earlier', usage: { inputTokens: 5, outputTokens: 2, totalTokens: 7 }, announce: false });
    expect(compactRecord(4, undefined, undefined, true)).toEqual({ remove: 4, announce: true });
  });
});
