#!/usr/bin/env node
// The `skillstate` command. Registers tsx so the TypeScript sources run without a build step,
// then hands over to src/cli/main.ts.
import { register } from 'tsx/esm/api';

register();
const { main } = await import(new URL('../src/cli/main.ts', import.meta.url).href);
process.exitCode = await main(process.argv.slice(2));
