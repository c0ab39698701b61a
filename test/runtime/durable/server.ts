/**
 * A process serving 100 durable agents on the SQLite file named by its first argument, for the
 * crash test (in the durability its third argument names, `step` by default). `serve`: reads call lines (`<call number>`) on stdin, calls agent `a<n % 100>`
 * with `ledger.record`, and writes `ok <call number>` once answered. `check`: opens the file,
 * waits for signals due, and prints every agent's state as JSON.
 */
import { createInterface } from 'node:readline';
import { createAgentSystem, createSignal, createSqliteStore } from '../../../src/index.js';
import { Ledger } from './ledger.js';

const AGENTS = 100;

const [mode, path, durability = 'step'] = process.argv.slice(2);
// 'interval' with a long interval: answers run ahead of what is written (the lossy mode).
const system = createAgentSystem({ definitions: [Ledger], store: createSqliteStore({ path: path! }), callTimeout: Infinity, durability: durability as 'step' | 'interval', ...(durability === 'interval' ? { intervalMs: 60_000 } : {}) });
const restored = system.list().length;

if (mode === 'serve') {
  if (restored === 0) {
    for (let i = 0; i < AGENTS; i++) system.spawn(Ledger, { id: `a${i}` });
    await system.get('a0')!.call(createSignal('ledger.remind', { inMs: 150 }));
    await system.flush();
  }
  process.stdout.write(`ready ${restored}\n`);
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    const call = Number(line);
    void system
      .get(`a${call % AGENTS}`)!
      .call(createSignal('ledger.record', { call }))
      .then(() => process.stdout.write(`ok ${call}\n`));
  });
} else {
  // A tick due while no process ran fires as the system opens; give it the time to.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const states = Object.fromEntries(system.list().map((ref) => [ref.id, ref.getSnapshot().state]));
  process.stdout.write(`${JSON.stringify({ restored, states })}\n`);
  await system.shutdown();
}
