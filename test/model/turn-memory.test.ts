/**
 * A long-lived model-driven agent does not grow: what a turn allocates is gone once it ends —
 * abort listeners, model-step signals, stream readers and the promises around them — whether the
 * answer is streamed or not. Measured in a process of its own with forced collections.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function retainedPerTurn(mode: 'stream' | 'generate'): number {
  const run = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'test/model/turn-memory.program.ts', mode], { cwd: root, encoding: 'utf8' });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return (JSON.parse(run.stdout) as { bytesPerTurn: number }).bytesPerTurn;
}

describe('memory over many turns', () => {
  // A leaked abort signal with its listener and the stream reader it holds was ~5 KB a turn.
  it.each(['stream', 'generate'] as const)('an agent answering 2,500 turns (%s) retains under 512 bytes a turn', (mode) => {
    expect(retainedPerTurn(mode)).toBeLessThan(512);
  }, 180_000);
});
