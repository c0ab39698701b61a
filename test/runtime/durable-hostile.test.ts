/**
 * Durable agents used the way a careless or hostile program uses them: killed while agents go to
 * rest and wake, and used after their system shut down. What the docs promise holds, and only
 * that: an agent is passivated once its last changes are written, so whatever it answered before
 * it left memory survives SIGKILL in every durability; in `'step'` durability every answer does.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAgentSystem, createSqliteStore, RuntimeError, type AgentSystemOptions, type Diagnostic, type DurableStore, type ErrorInfo, type TraceRecord } from '../../src/index.js';
import { NotesAgent, createSignal, itemsOf, systemPerTest, tempFolders } from './fixtures.js';

/** As many agents as the server runs. */
const AGENTS = 10;

const systems = systemPerTest();
const folders = tempFolders('hostile');
const databaseFile = folders.database;

const SERVER = fileURLToPath(new URL('./durable/passivating-server.ts', import.meta.url));
/** Passivations seen before the kill: each agent goes to rest and wakes several times. */
const PASSIVATIONS_BEFORE_KILL = 50;

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

function server(mode: 'serve' | 'check', path: string, durability: string, onLine: (line: string) => void) {
  const child = spawn(process.execPath, ['--conditions=skillstate-source', '--import', 'tsx', SERVER, mode, path, durability], { stdio: ['pipe', 'pipe', 'inherit'] });
  createInterface({ input: child.stdout }).on('line', onLine);
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  return { child, exited };
}

/**
 * Serves agents that wake for a call, answer it, rest, are passivated and get the next call at
 * once, until `PASSIVATIONS_BEFORE_KILL` passivations; then kills the server with SIGKILL and
 * reads the file with a new process.
 */
async function killWhilePassivating(durability: string) {
  dir = await mkdtemp(join(tmpdir(), 'skillstate-hostile-'));
  const path = join(dir, 'agents.db');
  const sent: number[][] = Array.from({ length: AGENTS }, () => []);
  const answered: number[][] = Array.from({ length: AGENTS }, () => []);
  /** Per agent: how many of its calls were answered when it was last passivated. */
  const atRest: number[] = Array.from({ length: AGENTS }, () => 0);
  let calls = 0;
  let passivations = 0;
  let killed = false;
  const send = (agent: number) => {
    sent[agent]!.push(calls);
    serving.child.stdin.write(`${agent} ${calls++}\n`);
  };
  const serving = server('serve', path, durability, (line) => {
    const [kind, agent, call] = line.split(' ');
    if (kind === 'ready') for (let agent = 0; agent < AGENTS; agent++) send(agent);
    else if (kind === 'ok') answered[Number(agent)]!.push(Number(call));
    else if (kind === 'passivated') {
      atRest[Number(agent)] = answered[Number(agent)]!.length;
      if (killed) return;
      if (++passivations >= PASSIVATIONS_BEFORE_KILL) {
        killed = true;
        serving.child.kill('SIGKILL');
      } else send(Number(agent));
    }
  });
  serving.child.stdin.on('error', () => {}); // the pipe breaks with the kill
  expect(await serving.exited).toBe('SIGKILL');

  let stored: Record<string, number[]> | undefined;
  const checking = server('check', path, durability, (line) => (stored = JSON.parse(line) as Record<string, number[]>));
  expect(await checking.exited).toBe(0);
  return { sent, answered, atRest, stored: stored! };
}

describe('SIGKILL while agents are passivated and woken', () => {
  it.each(['step', 'interval', 'manual'])("keeps in '%s' durability every call an agent answered before it was passivated, each once, in order", async (durability) => {
    const { sent, answered, atRest, stored } = await killWhilePassivating(durability);
    expect(Object.keys(stored).sort()).toEqual(Array.from({ length: AGENTS }, (_, agent) => `a${agent}`).sort());
    for (let agent = 0; agent < AGENTS; agent++) {
      const calls = stored[`a${agent}`]!;
      // A prefix of what was sent to it: nothing skipped, doubled or half-applied.
      expect(calls).toEqual(sent[agent]!.slice(0, calls.length));
      expect(atRest[agent]).toBeGreaterThan(0);
      expect(calls.length).toBeGreaterThanOrEqual(atRest[agent]!);
      if (durability === 'step') expect(calls.length).toBeGreaterThanOrEqual(answered[agent]!.length);
    }
  }, 60_000);
});

describe('a passivating system after shutdown', () => {
  /** A system on `path` whose agent 'n1' answered one call and was passivated. */
  async function passivatedThenShutDown(path: string) {
    let passivated: () => void = () => {};
    const errors: ErrorInfo[] = [];
    const trace = (record: TraceRecord) => record.kind === 'passivate' && passivated();
    const system = systems.start({ definitions: [NotesAgent], store: createSqliteStore({ path }), passivate: { idleMs: 10 }, trace, onUnhandledError: (error) => errors.push(error) });
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    const resting = new Promise<void>((resolve) => (passivated = resolve));
    await agent.call(createSignal('notes.add', { item: 'kept' }));
    await resting;
    await system.shutdown();
    return { system, agent, errors };
  }

  it('holds no agent, as one that does not passivate: persistAll gives none, stop names an unknown agent and reports nothing', async () => {
    const path = await databaseFile();
    const { system, agent, errors } = await passivatedThenShutDown(path);
    expect(agent.status).toBe('stopped');
    expect(system.list()).toEqual([]);
    expect(system.get('n1')).toBeUndefined();
    expect(system.persistAll()).toEqual([]);
    const stopped = await system.stop('n1').then(() => undefined, (error: unknown) => error);
    expect(stopped).toBeInstanceOf(RuntimeError);
    expect(stopped).toMatchObject({ code: 'unknown_agent', subject: 'n1' });
    expect(errors).toEqual([]);
    // It stays in the file for the next system.
    const next = systems.start({ definitions: [NotesAgent], store: createSqliteStore({ path }) });
    expect(itemsOf(next.get('n1')!)).toEqual(['kept']);
  });
});

describe("a durable system's options", () => {
  /** Options a system is refused for, with the option its error names. */
  const REFUSED: Record<string, { options: Record<string, unknown>; subject: string }> = {
    'a misspelled option': { options: { onError: () => {} }, subject: 'onError' },
    'an unknown durability': { options: { durability: 'sometimes' }, subject: 'durability' },
    'a negative interval': { options: { durability: 'interval', intervalMs: -5 }, subject: 'intervalMs' },
    'an idleMs of 0': { options: { passivate: { idleMs: 0 } }, subject: 'passivate' },
    'models that are not an object': { options: { models: 5 }, subject: 'models' },
  };

  it.each(['durability', 'intervalMs'] as const)('refuses %s without a store, rather than keep the agents in memory only', (option) => {
    expect(() => createAgentSystem({ [option]: option === 'durability' ? 'step' : 50 })).toThrow(expect.objectContaining({ code: 'invalid_options', subject: option, message: expect.stringContaining('needs a store') }));
  });

  it("says intervalMs is ignored in a durability other than 'interval'", async () => {
    const said: Diagnostic[] = [];
    systems.start({ store: createSqliteStore({ path: await databaseFile() }), durability: 'step', intervalMs: 50, onUnhandledDiagnostic: (diagnostic) => said.push(diagnostic) });
    expect(said).toEqual([expect.objectContaining({ level: 'warning', code: 'option_ignored', subject: 'intervalMs', details: { option: 'intervalMs', durability: 'step' } })]);
  });

  it.each(Object.keys(REFUSED))('closes the store it was given, so the file opens again at once: %s', async (name) => {
    const path = await databaseFile();
    const { options, subject } = REFUSED[name]!;
    let refused: unknown;
    try {
      createAgentSystem({ definitions: [NotesAgent], store: createSqliteStore({ path }), ...options } as AgentSystemOptions);
    } catch (error) {
      refused = error;
    }
    expect(refused).toMatchObject({ code: 'invalid_options', subject });
    const system = systems.start({ definitions: [NotesAgent], store: createSqliteStore({ path }) });
    await system.spawn(NotesAgent, { id: 'n1' }).call(createSignal('notes.add', { item: 'written' }));
  });

  it('leaves open a store another system writes to, and that system keeps writing', async () => {
    const path = await databaseFile();
    const store = createSqliteStore({ path });
    const first = systems.start({ definitions: [NotesAgent], store });
    expect(() => createAgentSystem({ definitions: [NotesAgent], store })).toThrow(expect.objectContaining({ code: 'invalid_options', subject: 'store' }));
    await first.spawn(NotesAgent, { id: 'n1' }).call(createSignal('notes.add', { item: 'written' }));
    await first.shutdown();
    const next = systems.start({ definitions: [NotesAgent], store: createSqliteStore({ path }) });
    expect(itemsOf(next.get('n1')!)).toEqual(['written']);
  });
});

describe('a stored agent left in the file unrestored', () => {
  it('keeps its id: a new agent of that id is refused rather than written over its snapshot', async () => {
    const path = await databaseFile();
    const first = systems.start({ definitions: [NotesAgent], store: createSqliteStore({ path }) });
    await first.spawn(NotesAgent, { id: 'n1' }).call(createSignal('notes.add', { item: 'kept' }));
    await first.shutdown();

    const errors: Array<{ code: string; agent: string | undefined }> = [];
    const without = systems.start({ store: createSqliteStore({ path }), onUnhandledError: (error, agent) => errors.push({ code: error.code, agent }) });
    expect(errors).toEqual([{ code: 'invalid_snapshot', agent: 'n1' }]);
    expect(() => without.spawn(NotesAgent, { id: 'n1' })).toThrow(expect.objectContaining({ code: 'duplicate_agent', subject: 'n1', message: expect.stringContaining('would write over its snapshot') }));
    await without.shutdown();

    const next = systems.start({ definitions: [NotesAgent], store: createSqliteStore({ path }) });
    expect(itemsOf(next.get('n1')!)).toEqual(['kept']);
  });
});

describe("an option of passivate's or createSqliteStore's given to createAgentSystem", () => {
  it.each([
    ['idleMs', { idleMs: 100 }, 'createAgentSystem({ passivate: { idleMs } })'],
    ['path', { path: 'agents.db' }, 'createAgentSystem({ store: createSqliteStore({ path }) })'],
  ])('%s is refused, saying where it goes', (subject, options, says) => {
    expect(() => createAgentSystem(options as AgentSystemOptions)).toThrow(expect.objectContaining({ code: 'invalid_options', subject, message: expect.stringContaining(`${subject} goes in ${says}`) }));
  });
});

describe('createSqliteStore options', () => {
  it.each([
    ['a misspelled option', { pagesize: 10 }, 'pagesize', "did you mean 'pageSize'?"],
    ["an option of createAgentSystem's", { durability: 'manual' }, 'durability', 'createSqliteStore options are: path, pageSize'],
  ])('refuses %s rather than ignore it', async (_name, extra, subject, says) => {
    const path = await databaseFile();
    expect(() => createSqliteStore({ path, ...extra } as never)).toThrow(expect.objectContaining({ code: 'invalid_options', subject, message: expect.stringContaining(says) }));
    // Refused before the file was opened: it opens at once.
    createSqliteStore({ path }).close();
  });

  it('says how to pass a path given as a bare string', () => {
    expect(() => createSqliteStore('agents.db' as never)).toThrow(expect.objectContaining({ code: 'invalid_options', subject: 'path', message: expect.stringContaining('createSqliteStore({ path: "agents.db" })') }));
  });
});

describe('a database path below a file', () => {
  it.each([['x.db'], ['deeper/x.db']])('is refused naming the file in the way: <file>/%s', async (below) => {
    const file = join(await folders.folder(), 'notes.txt');
    await writeFile(file, 'not a folder');
    expect(() => createSqliteStore({ path: join(file, below) })).toThrow(
      expect.objectContaining({ code: 'store_failed', details: { reason: 'open_failed', path: join(file, below) }, message: expect.stringContaining(`${file} is a file, not a folder`) }),
    );
  });
});

describe("'interval' durability", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('takes an intervalMs longer than Node timers take without writing at once', async () => {
    const path = await databaseFile();
    const sqlite = createSqliteStore({ path });
    let commits = 0;
    const store: DurableStore = { ...sqlite, commit: (batch) => (commits++, sqlite.commit(batch)), close: () => sqlite.close() };
    // 3e9 ms is past the 2^31 - 1 ms Node's setTimeout takes: it would fire after 1 ms.
    const system = systems.start({ definitions: [NotesAgent], store, durability: 'interval', intervalMs: 3e9 });
    await system.spawn(NotesAgent, { id: 'n1' }).call(createSignal('notes.add', { item: 'at shutdown' }));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(commits).toBe(0);
    await system.shutdown();
    expect(commits).toBe(1);
    const next = systems.start({ definitions: [NotesAgent], store: createSqliteStore({ path }) });
    expect(itemsOf(next.get('n1')!)).toEqual(['at shutdown']);
  });

  it('writes a change made while the last batch was written intervalMs after the change, not intervalMs after that write', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    /** When each batch was handed to the store, and what it saved; the first is written once `written` is called. */
    const commits: Array<{ at: number; ids: string[] }> = [];
    let written: () => void = () => {};
    const store: DurableStore = {
      commit: (batch) => {
        commits.push({ at: Date.now(), ids: batch.save.map((agent) => agent.id) });
        return commits.length === 1 ? new Promise<void>((resolve) => (written = resolve)) : Promise.resolve();
      },
      loadAll: () => [],
      close: () => {},
      save: async () => {},
      load: async () => undefined,
      delete: async () => false,
      list: async () => [],
    };
    const start = Date.now();
    const system = systems.start({ definitions: [NotesAgent], store, durability: 'interval', intervalMs: 100 });
    const agent = system.spawn(NotesAgent, { id: 'n1' });
    await vi.advanceTimersByTimeAsync(100);
    expect(commits).toEqual([{ at: start + 100, ids: ['n1'] }]);
    // A change 50 ms into that write, which takes 90 ms.
    await vi.advanceTimersByTimeAsync(50);
    await agent.call(createSignal('notes.add', { item: 'during the write' }));
    await vi.advanceTimersByTimeAsync(40);
    written();
    await vi.advanceTimersByTimeAsync(60);
    expect(commits).toEqual([
      { at: start + 100, ids: ['n1'] },
      { at: start + 250, ids: ['n1'] },
    ]);
  });
});
