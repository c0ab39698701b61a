/**
 * Runs the benchmarks and prints one table. `npm run bench` runs them all;
 * `npm run bench -- router cmd` runs the named ones. They run compiled by `tsc`, as the package
 * ships, not through a source loader. Node and machine details head the output
 * so the figures can be copied into BENCHMARKS.md as they are.
 */
import { readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { renderTable, type ReportRow } from './harness.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const wanted = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
// `.bench.js` when compiled, `.bench.ts` when run from source.
const suffix = `.bench${path.extname(fileURLToPath(import.meta.url))}`;
const files = readdirSync(here)
  .filter((file) => file.endsWith(suffix))
  .filter((file) => wanted.length === 0 || wanted.includes(file.slice(0, -suffix.length)))
  .sort();

const unknown = wanted.filter((name) => !files.some((file) => file === `${name}${suffix}`));
if (unknown.length > 0) {
  const known = readdirSync(here).filter((file) => file.endsWith(suffix)).map((file) => file.slice(0, -suffix.length));
  console.error(`no bench named ${unknown.map((name) => `'${name}'`).join(', ')}; the benches are: ${known.join(', ')}`);
  process.exit(2);
}

const cpus = os.cpus();
console.log(`# skillstate benchmarks — ${new Date().toISOString().slice(0, 10)}`);
console.log(`node ${process.version}, ${os.platform()} ${os.arch()}, ${cpus.length} × ${cpus[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`);
console.log('');

const rows: ReportRow[] = [];
let failed = 0;
for (const file of files) {
  const module = (await import(pathToFileURL(`${here}${file}`).href)) as { run: () => Promise<ReportRow[]> };
  process.stderr.write(`running ${file}...\n`);
  const produced = await module.run();
  for (const row of produced) if (row.pass === false) failed++;
  rows.push(...produced);
  console.log(renderTable(produced));
  console.log('');
}
console.log(`${rows.filter((r) => r.pass !== undefined).length - failed} of ${rows.filter((r) => r.pass !== undefined).length} targets met.`);
