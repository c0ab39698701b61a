/**
 * A result refused for a misspelled change (`result(output, { stat })`) is journaled with what
 * made it refused, so a replay is refused the same way rather than applied without the change.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cmd, defineAction, defineAgent, result, type ActionChanges } from '../../src/index.js';
import { fromEntry, toEntry } from '../../src/restate/journal.js';

describe('a result with a misspelled change, journaled', () => {
  it('is refused again when the journal entry is replayed', async () => {
    const returned = result('emptied', { stat: { balance: 0 } } as unknown as ActionChanges);
    const entry = JSON.parse(JSON.stringify(toEntry({ returned }))) as ReturnType<typeof toEntry>;
    expect(entry).toMatchObject({ kind: 'result', unread: { key: 'stat' } });
    const replayed = fromEntry(entry, new Map());
    const Replay = defineAgent({
      name: 'replay',
      actions: [defineAction({ name: 'answer', description: 'Answers what the journal holds', input: z.object({}), run: () => replayed })],
    });
    const agent = Replay.new({ id: 'r1' });
    const run = await cmd(agent, 'answer');
    expect(run.results[0]).toMatchObject({ ok: false, error: { code: 'invalid_output', details: { field: 'stat', suggestion: 'state' } } });
  });
});
