/**
 * The agent the durable servers run: `ledger.record` { call } appends a call number to its
 * state, `ledger.remind` { inMs } schedules a `ledger.tick`, which records that it fired.
 */
import { z } from 'zod';
import { Effects, createSignal, defineAction, defineAgent, defineSkill, result } from '../../../src/index.js';

const entries = z.object({ calls: z.array(z.number()).default([]), fired: z.array(z.string()).default([]) });
export const Ledger = defineAgent({
  name: 'ledger_agent',
  skills: [
    defineSkill({
      name: 'ledger',
      schema: entries,
      actions: [
        defineAction({
          name: 'record',
          description: 'Record a call',
          input: z.object({ call: z.number() }),
          state: entries,
          run: ({ call }, { skillState }) => result({ recorded: call }, { state: { calls: [...skillState.calls, call] } }),
        }),
        defineAction({
          name: 'remind',
          description: 'Schedule a tick',
          input: z.object({ inMs: z.number() }),
          run: ({ inMs }) => result(null, { effects: [Effects.schedule(inMs, createSignal('ledger.tick'))] }),
        }),
        defineAction({
          name: 'tick',
          description: 'A tick fell due',
          input: z.object({}),
          state: entries,
          run: (_input, { skillState }) => result(null, { state: { fired: [...skillState.fired, 'tick'] } }),
        }),
      ],
      routes: [
        { path: 'ledger.record', target: { action: 'record' } },
        { path: 'ledger.remind', target: { action: 'remind' } },
        { path: 'ledger.tick', target: { action: 'tick' } },
      ],
    }),
  ],
});
