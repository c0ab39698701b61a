/**
 * Global setup: a checkout the unprivileged user `nobody` can run. Tests that check a permission
 * (a folder the scan cannot read) run their program as `nobody` when the suite runs as root, since
 * root reads any folder. `nobody` must reach what it runs; a checkout inside a folder only its owner
 * may enter (mode 0700: root's home, a `mktemp -d` folder) is out of its reach. Then this setup
 * hard-links the checkout's code and node_modules (and Node itself, when `nobody` cannot run it)
 * into a world-readable temporary folder, and those tests run that copy. The folders they check
 * are their own, with their real permissions.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, linkSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { NOBODY, type UnprivilegedCheckout } from './unprivileged.js';

const root = fileURLToPath(new URL('..', import.meta.url));
/** What a program run from the checkout needs: the package's code, its manifest, its dependencies and the tests' fixtures it may import. */
const NEEDED = ['package.json', 'tsconfig.json', 'bin', 'src', 'machines', 'skills', 'examples', 'test', 'node_modules'];

/** Whether `nobody` can run `node` and read `files` (the probe's failure says which it could not). */
function reachable(node: string, files: string[]): boolean {
  const probe = spawnSync(node, ['-e', `for (const file of ${JSON.stringify(files)}) require('node:fs').accessSync(file, require('node:fs').constants.R_OK)`], {
    uid: NOBODY,
    gid: NOBODY,
    encoding: 'utf8',
  });
  return !probe.error && probe.status === 0;
}

const probeFiles = (checkout: string) => [path.join(checkout, 'bin', 'skillstate.js'), path.join(checkout, 'node_modules', 'tsx', 'package.json')];

export default function setup(project: TestProject): (() => void) | undefined {
  if (process.getuid?.() !== 0 || reachable(process.execPath, probeFiles(root))) {
    project.provide('unprivileged', { root, node: process.execPath });
    return undefined;
  }
  const copy = mkdtempSync(path.join(os.tmpdir(), 'skillstate-unprivileged-'));
  chmodSync(copy, 0o755);
  for (const item of NEEDED) {
    if (!existsSync(path.join(root, item))) continue;
    // Hard links: a copy of 1 GB of node_modules in a few seconds; a plain copy across file systems.
    const linked = spawnSync('cp', ['-al', path.join(root, item), copy], { encoding: 'utf8' });
    if (linked.status !== 0) {
      const copied = spawnSync('cp', ['-a', path.join(root, item), copy], { encoding: 'utf8' });
      if (copied.status !== 0) throw new Error(`could not copy ${item} where nobody can read it: ${copied.stderr}`);
    }
  }
  let node = process.execPath;
  if (spawnSync(node, ['--version'], { uid: NOBODY, gid: NOBODY }).error) {
    node = path.join(copy, 'node');
    try {
      linkSync(process.execPath, node);
    } catch {
      copyFileSync(process.execPath, node);
    }
    chmodSync(node, 0o755);
  }
  if (!reachable(node, probeFiles(copy))) {
    rmSync(copy, { recursive: true, force: true });
    throw new Error(`nobody cannot read a copy of the checkout in ${os.tmpdir()}: its files are not world-readable (umask?)`);
  }
  project.provide('unprivileged', { root: copy, node });
  return () => rmSync(copy, { recursive: true, force: true });
}
