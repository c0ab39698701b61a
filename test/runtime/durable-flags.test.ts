/**
 * The store's database thread starts whatever flags the program was run with: a program given as
 * `node --input-type=module -e …` (a quick script, a shell one-liner) opens, writes and reads a
 * store as a file would.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempFolders } from './fixtures.js';

const store = fileURLToPath(new URL('../../src/runtime/sqlite-store.ts', import.meta.url));
const files = tempFolders('store-flags');

describe('a store opened by a program run with --input-type', () => {
  // With flags a worker thread refuses when given them (a process's heap size, --expose-gc) too.
  for (const flags of [['--input-type=module'], ['--input-type', 'module'], ['--expose-gc', '--max-old-space-size=512', '--input-type=module']]) {
    it(`opens, writes and reads back with ${flags.join(' ')}`, async () => {
      const path = await files.database();
      const program = `
        import { createSqliteStore } from ${JSON.stringify(store)};
        const store = createSqliteStore({ path: ${JSON.stringify(path)} });
        await store.commit({ save: [{ id: 'a', parent: undefined, definition: 'counter', snapshot: '{"count":3}' }], delete: [] });
        process.stdout.write(JSON.stringify(await store.list()));
        await store.close();
      `;
      const run = spawnSync(process.execPath, ['--import', 'tsx', ...flags, '-e', program], { encoding: 'utf8', timeout: 120_000 });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual(['a']);
    }, 130_000);
  }
});
