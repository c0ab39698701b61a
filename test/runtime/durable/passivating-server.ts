/**
 * A process serving 10 durable agents that passivate after 20 ms of rest, on the SQLite file named
 * by its second argument, in the durability its third argument names, for the kill tests of
 * `durable-hostile.test.ts`. `serve`: reads call lines (`<agent> <call number>`) on stdin, calls
 * agent `a<agent>` with `ledger.record`, writes `ok <agent> <call number>` once answered, and
 * `passivated <agent>` each time an agent leaves memory. `check`: opens the file and prints every
 * agent's calls as JSON.
 */
import { createInterface } from 'node:readline';
import { createAgentSystem, createSignal, createSqliteStore } from '../../../src/index.js';
import { Ledger } from './ledger.js';

const AGENTS = 10;

const [mode, path, durability = 'step'] = process.argv.slice(2);
if (mode === 'serve') {
  const system = createAgentSystem({
    definitions: [Ledger],
    store: createSqliteStore({ path: path! }),
    durability: durability as 'step' | 'interval' | 'manual',
    // Longer than an agent takes to rest: in 'interval' durability an agent waits for its write to be passivated.
    ...(durability === 'interval' ? { intervalMs: 100 } : {}),
    passivate: { idleMs: 20 },
    callTimeout: Infinity,
    trace: (record) => {
      if (record.kind === 'passivate') process.stdout.write(`passivated ${record.agent.slice(1)}\n`);
    },
  });
  for (let i = 0; i < AGENTS; i++) system.spawn(Ledger, { id: `a${i}` });
  process.stdout.write('ready\n');
  createInterface({ input: process.stdin }).on('line', (line) => {
    const [agent, call] = line.split(' ').map(Number) as [number, number];
    void system
      .get(`a${agent}`)!
      .call(createSignal('ledger.record', { call }))
      .then(() => process.stdout.write(`ok ${agent} ${call}\n`));
  });
} else {
  const system = createAgentSystem({ definitions: [Ledger], store: createSqliteStore({ path: path! }) });
  const calls = Object.fromEntries(system.list().map((ref) => [ref.id, (ref.getSnapshot().state as { ledger: { calls: number[] } }).ledger.calls]));
  process.stdout.write(`${JSON.stringify(calls)}\n`);
  await system.shutdown();
}
