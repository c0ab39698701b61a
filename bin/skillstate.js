#!/usr/bin/env node
// The `skillstate` command. An installed package runs its build (`dist/`); inside the repository,
// where the `skillstate-source` condition is set (or before the first build), it runs the
// TypeScript sources through tsx.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

let entry = import.meta.resolve('skillstate/cli');
if (!existsSync(fileURLToPath(entry))) entry = new URL('../src/cli/main.ts', import.meta.url).href;
if (entry.endsWith('.ts')) (await import('tsx/esm/api')).register();
// A reader that stops early (`skillstate read ... | head -1`) ends the output, not the program
// with a stack trace: what it did not read was not wanted.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}
const { main } = await import(entry);
process.exitCode = await main(process.argv.slice(2));
