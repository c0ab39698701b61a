/**
 * Persistence: snapshot an agent to a folder, restore it in a fresh system (as a new process
 * would), and check it answers the same. Run: npm run example examples/persistence.ts
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgentSystem, createFileStore, createSignal, defineAgent } from 'skillstate';
import { arithmetic, counter } from 'skillstate/skills';

export const MathAgent = defineAgent({ name: 'math_agent', skills: [counter] });

export async function persistenceTour(log: (line: string) => void = console.log): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'skillstate-example-'));
  const store = createFileStore(dir);
  try {
    const first = createAgentSystem({ skills: [arithmetic] });
    const agent = first.spawn(MathAgent, { id: 'durable' });
    agent.send(createSignal('counter.increment'));
    agent.send(createSignal('counter.increment'));
    await agent.mount('arithmetic');
    await store.save(agent.persist());
    log(`saved to ${dir}, which now holds the agents ${JSON.stringify(await store.list())}`);
    await first.shutdown();

    // A new system knows the definition and the skills by name, as a restarted process would.
    const second = createAgentSystem({ definitions: [MathAgent], skills: [arithmetic] });
    const restored = second.restore(await store.load('durable'));
    log(`restored state: ${JSON.stringify(restored.getSnapshot().state)}`);
    log(`restored lifecycles: ${JSON.stringify(restored.getSnapshot().lifecycles)}`);
    log(`still counts: ${JSON.stringify(await restored.call(createSignal('counter.increment')))}`);
    log(`still has arithmetic: ${JSON.stringify(await restored.call(createSignal('arithmetic.multiply', { a: 3, b: 5 })))}`);
    await second.shutdown();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await persistenceTour();
