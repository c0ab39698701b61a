/**
 * Durable agents on the embedded default: a system on an SQLite file keeps every step before it
 * answers, and a system opened on the same file later (the next `npm start`, a restarted
 * process) starts with every agent it holds. Run: npm run example examples/durable.ts [file]
 * (default `.skillstate/demo.db`; run it twice).
 */
import { createAgentSystem, createSignal, createSqliteStore, defineAgent } from 'skillstate';
import { counter } from 'skillstate/skills';

export const VisitCounter = defineAgent({ name: 'visit_counter', skills: [counter] });

/** Opens the system on `path`, says how many agents it restored, and counts one more visit. */
export async function durableTour(path = '.skillstate/demo.db', log: (line: string) => void = console.log): Promise<void> {
  // 'step' durability (the default): a call is answered once its step is in the file.
  const system = createAgentSystem({ definitions: [VisitCounter], store: createSqliteStore({ path }) });
  try {
    const restored = system.list().length;
    log(restored === 0 ? `no agent stored in ${path} yet: spawning one` : `restored ${restored} agent${restored === 1 ? '' : 's'} from ${path}`);
    const visits = system.get('visits') ?? system.spawn(VisitCounter, { id: 'visits' });
    const { count } = (await visits.call(createSignal('counter.increment'))) as { count: number };
    log(`visits counted across runs: ${count} (run it again: the agent comes back with its count)`);
  } finally {
    await system.shutdown();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await durableTour(process.argv[2]);
