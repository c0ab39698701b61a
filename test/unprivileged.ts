/**
 * Test helper: runs a program from the checkout without privileges — as the user `nobody` when the
 * tests run as root (root reads any folder, so a permission check needs someone it applies to). The
 * checkout `nobody` runs is the one the global setup (`unprivileged.setup.ts`) made reachable.
 */
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { inject } from 'vitest';

/** The uid and gid of `nobody`. */
export const NOBODY = 65534;

/** A checkout the unprivileged user can run, and the Node it runs it with. */
export interface UnprivilegedCheckout {
  /** The checkout's folder. */
  root: string;
  /** The Node executable to run it with. */
  node: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    unprivileged: UnprivilegedCheckout;
  }
}

const asRoot = process.getuid?.() === 0;

/** The checkout the unprivileged user runs (this one, or a world-readable copy of it). */
export function unprivilegedCheckout(): UnprivilegedCheckout {
  return inject('unprivileged');
}

/**
 * Runs `node <args>` without privileges and returns its outcome. A process that could not start is
 * a setup problem, reported as such (`what` names the program).
 */
export function runUnprivileged(what: string, args: string[], options: Omit<SpawnSyncOptions, 'encoding' | 'uid' | 'gid'>) {
  const { node } = unprivilegedCheckout();
  const result = spawnSync(node, args, { timeout: 60_000, ...options, encoding: 'utf8', ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}) });
  if (result.error) throw new Error(`could not run ${what}${asRoot ? ' as nobody' : ''}: ${result.error.message}`);
  return result;
}
