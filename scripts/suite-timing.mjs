// Times the test suite: runs `vitest run` with its JSON reporter and prints the wall time, the
// tests that passed and failed, and the slowest test files. With --hog, as many busy-loop Node
// processes as the machine has cores keep every core busy during the run (a loaded machine);
// --runs N runs it N times in a row and stops at the first failing run.
//
//   node scripts/suite-timing.mjs [--hog] [--runs N] [--top N] [-- vitest arguments]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const argv = process.argv.slice(2);
const split = argv.indexOf('--');
const own = split === -1 ? argv : argv.slice(0, split);
const vitestArgs = split === -1 ? [] : argv.slice(split + 1);
const hog = own.includes('--hog');
const number = (flag, fallback) => {
  const at = own.indexOf(flag);
  if (at === -1) return fallback;
  const value = Number(own[at + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${flag} needs a whole number above 0, got ${own[at + 1]}`);
  return value;
};
const runs = number('--runs', 1);
const top = number('--top', 15);
const unknown = own.filter((arg, i) => arg.startsWith('--') && !['--hog', '--runs', '--top'].includes(arg) && !['--runs', '--top'].includes(own[i - 1]));
if (unknown.length) throw new Error(`unknown option ${unknown.join(', ')} (vitest's own go after --)`);

/** Busy loops, one per core, until stopped. */
function startHog() {
  const cores = os.availableParallelism();
  const children = Array.from({ length: cores }, () => spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore' }));
  console.log(`CPU hog: ${cores} busy-loop processes (${children.map((child) => child.pid).join(', ')})`);
  return () => children.forEach((child) => child.kill('SIGKILL'));
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

async function run(n) {
  const out = mkdtempSync(path.join(os.tmpdir(), 'skillstate-suite-timing-'));
  const report = path.join(out, 'report.json');
  const started = performance.now();
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--reporter=json', `--outputFile=${report}`, ...vitestArgs], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    child.once('exit', (status) => resolve(status ?? 1));
  });
  const wall = performance.now() - started;
  let result;
  try {
    result = JSON.parse(readFileSync(report, 'utf8'));
  } catch (error) {
    console.log(`run ${n}: vitest exited with ${code} and wrote no report (${error.message})`);
    return false;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  const files = result.testResults.map((file) => ({ name: path.relative(root, file.name), ms: file.endTime - file.startTime, failed: file.assertionResults.filter((test) => test.status === 'failed') }));
  console.log(`\nrun ${n}: ${seconds(wall)} wall, exit ${code}; tests ${result.numPassedTests} passed, ${result.numFailedTests} failed, ${result.numPendingTests + result.numTodoTests} skipped, of ${result.numTotalTests} in ${files.length} files`);
  console.log(`slowest ${Math.min(top, files.length)} files (time from the file's start to its end, in its worker):`);
  for (const file of files.toSorted((a, b) => b.ms - a.ms).slice(0, top)) console.log(`  ${seconds(file.ms).padStart(8)}  ${file.name}`);
  for (const file of files) for (const test of file.failed) console.log(`FAILED ${file.name} > ${test.fullName}\n  ${(test.failureMessages[0] ?? '').split('\n').slice(0, 40).join('\n  ')}`);
  return code === 0;
}

const stopHog = hog ? startHog() : () => {};
process.once('SIGINT', () => {
  stopHog();
  process.exit(130);
});
let passed = 0;
try {
  for (let n = 1; n <= runs; n++) {
    if (!(await run(n))) break;
    passed++;
  }
} finally {
  stopHog();
}
console.log(`\n${passed} of ${runs} runs passed${hog ? ' under the CPU hog' : ''}`);
process.exitCode = passed === runs ? 0 : 1;
