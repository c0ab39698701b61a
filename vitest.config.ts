import os from 'node:os';
import { defineConfig } from 'vitest/config';

// Inside this repository `skillstate` means the TypeScript sources, not the build in dist/: the
// condition reaches the test workers and every program the tests start (examples, README blocks,
// the CLI, toolsets importing `skillstate`).
const SOURCE_CONDITION = '--conditions=skillstate-source';
if (!process.env.NODE_OPTIONS?.includes(SOURCE_CONDITION)) {
  process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, SOURCE_CONDITION].filter(Boolean).join(' ');
}

export default defineConfig({
  resolve: { conditions: ['skillstate-source'] },
  ssr: { resolve: { conditions: ['skillstate-source'] } },
  test: {
    include: ['test/**/*.test.ts'],
    // One test file per core, and at least two at once: most files spend their time waiting on
    // what they started (CLI and MCP processes, a Restate server, Chromium), not computing, and
    // vitest's default of one worker less than the cores runs a 2-core machine's suite one file
    // at a time (394 s there, 224 s with two).
    maxWorkers: Math.max(2, os.availableParallelism()),
    // A checkout the unprivileged user `nobody` can run, for the tests that check permissions.
    globalSetup: ['test/unprivileged.setup.ts'],
    // Bounds for a test that hangs, not expectations: on a loaded machine (two cores busy with
    // other work) a test that starts subprocesses through tsx takes several times its quiet time.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
