/**
 * What the model-driven agent tests share: an agent with a conversation and real skills, a
 * system per test, and helpers to read the conversation and wait for signals. The model is the
 * scripted stand-in from `skillstate/testing` (or the AI SDK's own mock model), since the model
 * itself is not under test.
 */
import { z } from 'zod';
import {
  conversation,
  defineAction,
  defineAgent,
  defineSkill,
  fail,
  result,
  type AgentRef,
  type AgentSystem,
  type ConversationConfig,
  type ConversationState,
  type Diagnostic,
  type Signal,
  type TraceRecord,
} from '../../src/index.js';
import { calculator } from '../../skills/index.js';

/** A ledger: `pay` needs approval, `flaky` fails on demand, `audit` is hidden from models. */
export const ledgerState = z.object({ paid: z.array(z.object({ to: z.string(), amount: z.number() })).default([]), audits: z.number().default(0) });

export const ledger = defineSkill({
  name: 'ledger',
  schema: ledgerState,
  instructions: 'Payments go through the pay tool; never promise a payment before it ran.',
  actions: [
    defineAction({
      name: 'pay',
      description: 'Pay an amount to someone',
      input: z.object({ to: z.string(), amount: z.number().positive() }),
      state: ledgerState,
      needsApproval: true,
      run: ({ to, amount }, { skillState }) => result({ paid: amount, to }, { state: { paid: [...skillState.paid, { to, amount }] } }),
    }),
    defineAction({
      name: 'balance',
      description: 'The total paid so far',
      input: z.object({ explode: z.boolean().optional() }),
      state: ledgerState,
      run: ({ explode }, { skillState }) => {
        if (explode) return fail('ledger_offline', 'the ledger is offline');
        return { total: skillState.paid.reduce((sum, payment) => sum + payment.amount, 0) };
      },
    }),
    defineAction({
      name: 'audit',
      description: 'Counts an audit (people only)',
      input: z.object({}),
      state: ledgerState,
      tool: false,
      run: (_params: Record<string, never>, { skillState }) => result({ audits: skillState.audits + 1 }, { state: { audits: skillState.audits + 1 } }),
    }),
  ],
  routes: [{ path: 'ledger.audit', target: { action: 'audit' } }],
});

/** A model-driven agent with a calculator and a ledger. */
export function assistant(config: ConversationConfig = {}, name = 'assistant') {
  return defineAgent({ name, skills: [[conversation, { instructions: 'You are a careful assistant.', retryDelay: 1, ...config }], calculator, ledger] });
}

/** The conversation slice of an agent. */
export function chatOf(ref: AgentRef<object>): ConversationState {
  return (ref.getSnapshot().state as { conversation: ConversationState }).conversation;
}

/** Signals of `pattern` the system emits, as they come. */
export function record(system: AgentSystem, pattern: string): Signal[] {
  const signals: Signal[] = [];
  system.subscribe(pattern, (signal) => signals.push(signal));
  return signals;
}

/** Resolves with the first signal of `pattern` that `when` accepts. */
export function next(system: AgentSystem, pattern: string, when: (signal: Signal) => boolean = () => true): Promise<Signal> {
  return new Promise((resolve) => {
    const off = system.subscribe(pattern, (signal) => {
      if (!when(signal)) return;
      off();
      resolve(signal);
    });
  });
}

/** A trace that keeps its records, and the diagnostics a system reports. */
export function observed(): { trace: (record: TraceRecord) => void; records: TraceRecord[]; diagnostics: Diagnostic[]; onUnhandledDiagnostic: (d: Diagnostic) => void } {
  const records: TraceRecord[] = [];
  const diagnostics: Diagnostic[] = [];
  return { trace: (r) => records.push(r), records, diagnostics, onUnhandledDiagnostic: (d) => diagnostics.push(d) };
}

/** The states turn `n` of `agent` went through, as the trace recorded them. */
export function turnStates(records: readonly TraceRecord[], agent: string, n: number): string[] {
  return records.flatMap((r) => (r.kind === 'turn' && r.agent === agent && r.turn === n ? [r.state] : []));
}
