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

const SUITE_FLAG = '--suite=';
const suiteArg = process.argv.find((arg) => arg.startsWith(SUITE_FLAG));

if (suiteArg !== undefined) await runSuite(suiteArg.slice(SUITE_FLAG.length));
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

/** Runs one suite in a child process with this process's Node flags; resolves with its rows. */
function fork1(file: string): Promise<ReportRow[]> {
  return new Promise((resolve, reject) => {
    const child = fork(self, [`${SUITE_FLAG}${file}`], { execArgv: process.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let message: SuiteMessage | undefined;
    child.on('message', (received) => (message = received as SuiteMessage));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (message && 'rows' in message) resolve(message.rows);
      else if (message) reject(new Error(`${file} failed:\n${message.error}`));
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
      rows.push(...(await fork1(file)));
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
