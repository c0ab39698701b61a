/**
 * Runs the benchmarks and prints one table per suite. `npm run bench` runs them all;
 * `npm run bench -- router cmd` runs the named ones. They run compiled by `tsc`, as the package
 * ships, not through a source loader. Node and machine details head the output
 * so the figures can be copied into BENCHMARKS.md as they are.
 *
 * Each suite runs in a Node process of its own, started with this one's flags: a suite measures
 * what a user's process would see, not the heap, the servers and the JIT feedback the suites
 * before it left behind (a spawn measured after the Restate and MCP suites paid for their garbage
 * and for call sites those suites had made polymorphic).
 */
import { fork } from 'node:child_process';
import { readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { renderTable, type ReportRow } from './harness.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const self = fileURLToPath(import.meta.url);
// `.bench.js` when compiled, `.bench.ts` when run from source.
const suffix = `.bench${path.extname(self)}`;

/** The message a suite's process sends its parent: the rows it measured, or why it failed. */
type SuiteMessage = { rows: ReportRow[] } | { error: string };

/** Names the suite a child process runs; set by the parent only, so no argument can be taken for it. */
const SUITE_VARIABLE = 'SKILLSTATE_BENCH_SUITE';
/** A suite that has not reported after this long is stopped and counted as failed. */
const SUITE_TIME_LIMIT_MS = 20 * 60_000;

const suite = process.env[SUITE_VARIABLE];
if (suite !== undefined && process.send !== undefined) await runSuite(suite);
else await runAll();

/** In a suite's own process: run it, print its table, send its rows to the parent. */
async function runSuite(file: string): Promise<void> {
  const send = (message: SuiteMessage) => new Promise<void>((resolve) => process.send!(message, () => resolve()));
  try {
    const module = (await import(pathToFileURL(`${here}${file}`).href)) as { run: () => Promise<ReportRow[]> };
    const rows = await module.run();
    console.log(renderTable(rows));
    console.log('');
    await send({ rows });
  } catch (error) {
    await send({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
  // A suite may leave a handle open (a server's keep-alive socket): its process ends here.
  process.exit(0);
}

/**
 * Runs one suite in a child process with this process's Node flags (a debugger's `--inspect`
 * left out: every child would ask for the same port); resolves with its rows.
 */
function runInChild(file: string): Promise<ReportRow[]> {
  const execArgv = process.execArgv.filter((flag) => !flag.startsWith('--inspect'));
  return new Promise((resolve, reject) => {
    const child = fork(self, [], { execArgv, env: { ...process.env, [SUITE_VARIABLE]: file }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let message: SuiteMessage | undefined;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, SUITE_TIME_LIMIT_MS);
    child.on('message', (received) => (message = received as SuiteMessage));
    child.on('error', reject);
    // 'close', not 'exit': by then every message the child sent has arrived.
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (message && 'rows' in message) resolve(message.rows);
      else if (message) reject(new Error(`${file} failed:\n${message.error}`));
      else if (timedOut) reject(new Error(`${file} did not report within ${SUITE_TIME_LIMIT_MS / 60_000} minutes and was stopped`));
      else reject(new Error(`${file} exited (${signal ?? `code ${String(code)}`}) before reporting its figures`));
    });
  });
}

async function runAll(): Promise<void> {
  const wanted = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
  const known = readdirSync(here).filter((file) => file.endsWith(suffix)).sort();
  const nameOf = (file: string) => file.slice(0, -suffix.length);
  const unknown = wanted.filter((name) => !known.some((file) => nameOf(file) === name));
  if (unknown.length > 0) {
    console.error(`no bench named ${unknown.map((name) => `'${name}'`).join(', ')}; the benches are: ${known.map(nameOf).join(', ')}`);
    process.exit(2);
  }
  const files = known.filter((file) => wanted.length === 0 || wanted.includes(nameOf(file)));

  const cpus = os.cpus();
  console.log(`# skillstate benchmarks — ${new Date().toISOString().slice(0, 10)}`);
  console.log(`node ${process.version}, ${os.platform()} ${os.arch()}, ${cpus.length} × ${cpus[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`);
  console.log('Each suite runs in a Node process of its own.');
  console.log('');

  const rows: ReportRow[] = [];
  const broken: string[] = [];
  for (const file of files) {
    process.stderr.write(`running ${file}...\n`);
    try {
      rows.push(...(await runInChild(file)));
    } catch (error) {
      broken.push(nameOf(file));
      console.error(error instanceof Error ? error.message : String(error));
    }
  }
  const judged = rows.filter((row) => row.pass !== undefined);
  const met = judged.filter((row) => row.pass === true).length;
  console.log(`${met} of ${judged.length} targets met.`);
  if (broken.length > 0) {
    console.log(`Suites that failed to report: ${broken.join(', ')}.`);
    process.exitCode = 1;
  }
}
