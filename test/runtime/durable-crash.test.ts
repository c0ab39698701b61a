/**
 * A real process serving 100 durable agents is killed with SIGKILL in the middle of a stream of
 * calls; a new process opens the same database. Every call the caller saw answered is in the
 * state exactly once, and each agent holds a prefix of the calls sent to it, in order: no step
 * half-applied, none applied twice. A scheduled signal fires once across the crash.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';

const SERVER = fileURLToPath(new URL('./durable/server.ts', import.meta.url));
const AGENTS = 100;
/** Calls answered before the kill; calls sent: many more, so that some are in flight when it lands. */
const ANSWERED_BEFORE_KILL = 2_000;
const IN_FLIGHT = 300;

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Starts the server in `mode` on `path`; its stdout lines go to `onLine`. */
function server(mode: 'serve' | 'check', path: string, onLine: (line: string) => void, durability = 'step') {
  const child = spawn(process.execPath, ['--conditions=skillstate-source', '--import', 'tsx', SERVER, mode, path, durability], { stdio: ['pipe', 'pipe', 'inherit'] });
  createInterface({ input: child.stdout }).on('line', onLine);
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  return { child, exited };
}

type Report = { restored: number; states: Record<string, { ledger: { calls: number[]; fired: string[] } }> };

/** Serves calls in `durability` until `ANSWERED_BEFORE_KILL` are answered, kills the server, and opens the file again. */
async function crashAndReopen(durability: string): Promise<{ answered: Set<number>; sent: number; report: Report }> {
  dir = await mkdtemp(join(tmpdir(), 'skillstate-crash-'));
  const path = join(dir, 'agents.db');
  const answered = new Set<number>();
  let sent = 0;
  let killed = false;
  const serving = server('serve', path, (line) => {
    if (line.startsWith('ready')) {
      expect(line).toBe('ready 0');
      send(IN_FLIGHT);
      return;
    }
    const call = Number(line.slice('ok '.length));
    expect(answered.has(call)).toBe(false);
    answered.add(call);
    if (killed) return;
    if (answered.size >= ANSWERED_BEFORE_KILL) {
      killed = true;
      serving.child.kill('SIGKILL');
    } else send(1);
  }, durability);
  const send = (count: number) => {
    let lines = '';
    for (let i = 0; i < count; i++) lines += `${sent++}\n`;
    serving.child.stdin.write(lines);
  };
  serving.child.stdin.on('error', () => {}); // the pipe breaks with the kill
  expect(await serving.exited).toBe('SIGKILL');
  // Calls were still in flight when it died.
  expect(sent - answered.size).toBeGreaterThan(0);

  let report: Report | undefined;
  const checking = server('check', path, (line) => (report = JSON.parse(line) as Report));
  expect(await checking.exited).toBe(0);
  return { answered, sent, report: report! };
}

/** Every call each agent holds, after checking it holds a prefix of the calls sent to it, in order: nothing skipped or doubled. */
function storedCalls(report: Report): Set<number> {
  const stored = new Set<number>();
  for (let agent = 0; agent < AGENTS; agent++) {
    const calls = report.states[`a${agent}`]!.ledger.calls;
    expect(calls).toEqual(Array.from({ length: calls.length }, (_, i) => agent + i * AGENTS));
    for (const call of calls) stored.add(call);
  }
  return stored;
}

it("keeps every answered call exactly once through a SIGKILL in 'step' durability, and nothing half-applied", async () => {
  const { answered, report } = await crashAndReopen('step');
  expect(report.restored).toBe(AGENTS);
  const stored = storedCalls(report);
  const lost = [...answered].filter((call) => !stored.has(call));
  expect(lost, 'answered calls missing from the database').toEqual([]);
  expect(report.states.a0!.ledger.fired).toEqual(['tick']);
}, 120_000);

it("loses answered calls in 'interval' durability when the process dies before the interval is up (the lossy mode)", async () => {
  const { answered, report } = await crashAndReopen('interval');
  const stored = storedCalls(report);
  expect([...answered].filter((call) => !stored.has(call)).length).toBeGreaterThan(0);
}, 120_000);
