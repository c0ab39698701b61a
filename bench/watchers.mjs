// Compares ways of watching 1,000 skill folders (one node:fs watch per folder, a recursive node:fs
// watch, chokidar) for setup time and for seeing edits in a nested folder and in a linked skill.
// Not part of 'npm run bench': chokidar is not a dependency. Run: npm install --no-save chokidar && node bench/watchers.mjs
import { mkdirSync, writeFileSync, symlinkSync, mkdtempSync, rmSync, watch } from 'node:fs';
import { readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import chokidar from 'chokidar';

const base = mkdtempSync(path.join(os.tmpdir(), 'watchbench-'));
const root = path.join(base, 'skills');
const outside = path.join(base, 'outside', 'linked');
mkdirSync(outside, { recursive: true });
writeFileSync(path.join(outside, 'SKILL.md'), '---\nname: linked\n---\n');
for (let i = 0; i < 1000; i++) {
  const dir = path.join(root, `skill-${i}`, 'docs');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(root, `skill-${i}`, 'SKILL.md'), `---\nname: skill-${i}\n---\n`);
}
symlinkSync(outside, path.join(root, 'linked'));

function waitFor(check, ms = 3000) {
  return new Promise((resolve) => {
    const started = performance.now();
    const timer = setTimeout(() => resolve(null), ms);
    check.fire = (file) => { clearTimeout(timer); resolve(performance.now() - started); };
  });
}

async function trial(name, start) {
  const seen = { fire: () => {} };
  const t0 = performance.now();
  const stop = await start((file) => seen.fire(file));
  const setup = performance.now() - t0;
  let p = waitFor(seen);
  writeFileSync(path.join(root, 'skill-500', 'docs', 'guide.md'), `x${Math.random()}`);
  const own = await p;
  p = waitFor(seen);
  writeFileSync(path.join(outside, 'SKILL.md'), `---\nname: linked\ndescription: ${Math.random()}\n---\n`);
  const linked = await p;
  await stop();
  console.log(`${name.padEnd(34)} setup ${setup.toFixed(0).padStart(5)} ms  nested edit ${own === null ? 'MISSED' : `${own.toFixed(1)} ms`}  linked skill edit ${linked === null ? 'MISSED' : `${linked.toFixed(1)} ms`}`);
}

// 1. node:fs watch, one per folder discovery walked (what skillstate does).
await trial('node:fs watch, one per folder', async (on) => {
  const dirs = [root];
  for (const name of await readdir(root)) { dirs.push(path.join(root, name)); dirs.push(path.join(root, name, 'docs')); }
  const watchers = [];
  for (const dir of dirs) { try { watchers.push(watch(dir, (e, f) => on(f))); } catch {} }
  return () => watchers.forEach((w) => w.close());
});
// 2. node:fs watch, recursive (Node 20 on Linux: walks in JavaScript, does not follow links).
await trial('node:fs watch { recursive: true }', async (on) => {
  const w = watch(root, { recursive: true }, (e, f) => on(f));
  return () => w.close();
});
// 3. chokidar (follows links by default).
await trial('chokidar 5 (followSymlinks)', async (on) => {
  const w = chokidar.watch(root, { ignoreInitial: true });
  await new Promise((r) => w.on('ready', r));
  w.on('all', (e, f) => on(f));
  return () => w.close();
});
rmSync(base, { recursive: true, force: true });
