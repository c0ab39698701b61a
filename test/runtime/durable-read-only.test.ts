/**
 * A database file, or its folder, that cannot be written: opening it as a store is refused with
 * `store_failed`, naming the file and saying what to do, rather than with the driver's words; a
 * folder that becomes unsearchable while a system runs does not stop its writes. Each case opens the store in a real subprocess without privileges (as `nobody` when the tests
 * run as root: root writes through any file mode, so the permission would not hold for it).
 */
import { chmod, chown, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../src/index.js';
import { NOBODY, runUnprivileged, unprivilegedCheckout } from '../unprivileged.js';
import { rowTexts, tempFolders } from './fixtures.js';

const folders = tempFolders('read-only');
const asRoot = process.getuid?.() === 0;

/**
 * What opening the store at `path` throws in a subprocess without privileges (its code, details
 * and message), or 'opened'. The program is a file (the store's worker thread would inherit the
 * `--input-type` that `-e` needs).
 */
async function openUnprivileged(path: string): Promise<{ code: string; details: unknown; message: string } | 'opened'> {
  const checkout = unprivilegedCheckout().root;
  const store = pathToFileURL(join(checkout, 'src', 'runtime', 'sqlite-store.ts')).href;
  const program = join(await folders.folder(), 'open.mjs');
  await writeFile(
    program,
    `const { createSqliteStore } = await import(${JSON.stringify(store)});
try { createSqliteStore({ path: ${JSON.stringify(path)} }).close(); console.log(JSON.stringify('opened')); }
catch (error) { console.log(JSON.stringify({ code: error.code, details: error.details, message: error.message })); }\n`,
  );
  await chmod(dirname(program), 0o755);
  await chmod(program, 0o644);
  const child = runUnprivileged('the store', ['--import', 'tsx', program], { cwd: checkout });
  if (child.status !== 0) throw new Error(`the store's program failed: ${child.stderr}`);
  return JSON.parse(child.stdout) as 'opened' | { code: string; details: unknown; message: string };
}

/**
 * A folder holding an SQLite store (`agents.db`, written once and closed) that the unprivileged
 * user owns, so that only the modes given decide what it may write.
 */
async function storeFolder(): Promise<{ folder: string; path: string }> {
  const folder = await folders.folder();
  const path = join(folder, 'agents.db');
  createSqliteStore({ path }).close();
  if (asRoot) {
    await chown(folder, NOBODY, NOBODY);
    await chown(path, NOBODY, NOBODY);
  }
  return { folder, path };
}

describe('a database that cannot be written', () => {
  it('opens when the file and its folder are writable (the cases below differ by their modes only)', async () => {
    const { path } = await storeFolder();
    expect(await openUnprivileged(path)).toBe('opened');
  });

  it.each([
    ['a read-only file', 0o755, 0o444, 'the file is read-only'],
    ['a file in a read-only folder', 0o555, 0o644, 'its folder is read-only'],
  ])('refuses %s with store_failed, naming the path and what to do', async (_case, folderMode, fileMode, what) => {
    const { folder, path } = await storeFolder();
    await chmod(path, fileMode);
    await chmod(folder, folderMode);
    const before = await stat(path);
    const failure = await openUnprivileged(path);
    await chmod(folder, 0o755);
    expect(failure).toMatchObject({ code: 'store_failed', details: { reason: 'open_failed', path } });
    const { message } = failure as { message: string };
    expect(message).toContain(`cannot open the database ${path} for writing: ${what}`);
    expect(message).toContain('make the file and its folder writable, or give a path elsewhere');
    // Left as it was.
    expect((await stat(path)).mtimeMs).toBe(before.mtimeMs);
  });

  it('refuses a new database in a read-only folder, saying the file cannot be made there', async () => {
    const folder = await folders.folder();
    if (asRoot) await chown(folder, NOBODY, NOBODY);
    await chmod(folder, 0o555);
    const path = join(folder, 'agents.db');
    const failure = await openUnprivileged(path);
    await chmod(folder, 0o755);
    expect(failure).toMatchObject({ code: 'store_failed', details: { reason: 'open_failed', path } });
    expect((failure as { message: string }).message).toContain(`cannot open the database ${path} for writing: its folder is read-only, so the file cannot be made there`);
  });
});

describe('a folder that cannot be searched any more while its system runs', () => {
  it('has the steps written through the file the system holds open, answered, and there when the folder opens again', async () => {
    const { folder, path } = await storeFolder();
    const checkout = unprivilegedCheckout().root;
    const url = (...parts: string[]) => JSON.stringify(pathToFileURL(join(checkout, ...parts)).href);
    const program = join(await folders.folder(), 'run.mjs');
    await writeFile(
      program,
      `const { chmodSync } = await import('node:fs');
const { createAgentSystem, createSignal, createSqliteStore } = await import(${url('src', 'index.ts')});
const { Ledger } = await import(${url('test', 'runtime', 'durable', 'ledger.ts')});
const system = createAgentSystem({ definitions: [Ledger], store: createSqliteStore({ path: ${JSON.stringify(path)} }), onUnhandledError: () => {} });
const agent = system.spawn(Ledger, { id: 'a' });
await agent.call(createSignal('ledger.record', { call: 1 }));
chmodSync(${JSON.stringify(folder)}, 0o000);
let second;
try { await agent.call(createSignal('ledger.record', { call: 2 })); second = 'answered'; } catch (error) { second = error.code; }
await system.shutdown();
chmodSync(${JSON.stringify(folder)}, 0o755);
console.log(JSON.stringify(second));\n`,
    );
    await chmod(dirname(program), 0o755);
    await chmod(program, 0o644);
    const child = runUnprivileged('the system', ['--import', 'tsx', program], { cwd: checkout });
    await chmod(folder, 0o755);
    if (child.status !== 0) throw new Error(`the system's program failed: ${child.stderr}`);
    expect(JSON.parse(child.stdout)).toBe('answered');
    expect(JSON.parse(rowTexts(path).get('a')!).agent.state.ledger.calls).toEqual([1, 2]);
  });
});
