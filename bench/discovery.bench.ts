/**
 * Discovery of 1,000 generated SKILL.md folders, each with a 64 KiB body that must stay unread:
 * skillstate's `scanSkillSources` side by side with the workspace-skills loaders of @mastra/core
 * (`Workspace` + `LocalFilesystem`, `workspace.skills.list()`) and @voltagent/core (`Workspace` +
 * `NodeFilesystemBackend`, `workspace.skills.discoverSkills({ refresh: true })`) on the same tree.
 * Bytes read by skillstate are counted, to prove bodies stay untouched. Then hot reload on the
 * same tree: watching its 1,000 skill folders, and the cost of applying one edited SKILL.md in
 * that registry (the watcher's own `durationMs`: reload and re-watch, not the quiet period),
 * against a full rescan measured in the same run.
 */
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { discoverSkills } from '../src/index.js';
import { scanSkillSources } from '../src/manifest/discover.js';
import { compare, formatBytes, formatNs, pairedRatio, type ReportRow } from './harness.js';

const COUNT = 1000;
const BODY = `# Body\n\n${'This body is large and must not be read at discovery. '.repeat(1200)}\n`;

async function generate(): Promise<string> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'skillstate-bench-'));
  const root = path.join(base, 'skills');
  for (let i = 0; i < COUNT; i++) {
    const name = `skill-${String(i).padStart(4, '0')}`;
    await mkdir(path.join(root, name), { recursive: true });
    const front = `---\nname: ${name}\ndescription: Skill ${i} does task ${i % 37} for the user. It has a second sentence.\nversion: 1.0.${i}\ntriggers:\n  keywords: [task${i % 37}, topic${i}]\n  verbs: [do${i % 11}]\n---\n`;
    await writeFile(path.join(root, name, 'SKILL.md'), front + BODY);
  }
  return base;
}

/** The least any discovery must do, synchronously: list the folders and read the start of each SKILL.md. */
function readFloor(root: string): number {
  const buffer = Buffer.alloc(1024);
  let bytes = 0;
  for (const name of readdirSync(root)) {
    const fd = openSync(path.join(root, name, 'SKILL.md'), 'r');
    bytes += readSync(fd, buffer, 0, 1024, 0);
    closeSync(fd);
  }
  return bytes;
}

/** Watches the tree, then edits one SKILL.md at a time and reads how long applying each edit took. */
async function reload(root: string, rescanNs: number): Promise<ReportRow[]> {
  const started = performance.now();
  const registry = await discoverSkills({ extra: [root] }, { watch: { debounceMs: 10 } });
  const watchMs = performance.now() - started;
  const watcher = registry.watcher!;
  const watched = watcher.folders;
  const durations: number[] = [];
  try {
    for (let round = 0; round < 21; round++) {
      const name = `skill-${String((round * 37) % COUNT).padStart(4, '0')}`;
      const next = watcher.nextChange();
      const front = `---\nname: ${name}\ndescription: Edited in round ${round}. It has a second sentence.\nversion: 2.0.${round}\n---\n`;
      // Written beside the tree and moved in, as editors save: the watcher never reads a half-written file.
      const edited = path.join(path.dirname(root), 'edited.md');
      await writeFile(edited, front + BODY);
      await rename(edited, path.join(root, name, 'SKILL.md'));
      const change = await next;
      if (change.changed.join() !== name || registry.entry(name)?.version !== `2.0.${round}`) throw new Error(`reload of ${name} not applied: ${JSON.stringify(change)}`);
      durations.push(change.durationMs);
    }
  } finally {
    watcher.close();
  }
  durations.sort((a, b) => a - b);
  const median = durations[Math.floor(durations.length / 2)]!;
  return [
    { suite: 'discovery', name: `discoverSkills({ watch }): discovery + ${watched} folders watched`, value: `${watchMs.toFixed(1)} ms`, anchor: `rescan ${formatNs(rescanNs)}`, ratio: (watchMs * 1e6) / rescanNs, target: 'report (setup ÷ rescan)' },
    {
      suite: 'discovery',
      name: `reload of one changed skill in a registry of ${COUNT} (median of ${durations.length})`,
      value: `${median.toFixed(2)} ms`,
      anchor: `rescan ${formatNs(rescanNs)}`,
      ratio: rescanNs / (median * 1e6),
      target: '≤ 5 ms (ratio: rescan ÷ reload)',
      pass: median <= 5,
    },
  ];
}

/** What the benchmark uses of @mastra/core and @voltagent/core. */
interface ComparedLibraries {
  MastraWorkspace: new (options: { filesystem: unknown; skills: string[] }) => { skills?: { list(): Promise<unknown[]> } };
  LocalFilesystem: new (options: { basePath: string }) => unknown;
  volt: { Workspace: new (options: unknown) => unknown; NodeFilesystemBackend: new (options: { rootDir: string }) => unknown };
}

/**
 * The libraries compared with, from bench/compare: `npm run bench` installs them there, not with
 * skillstate (they declare Node >= 22). The path is from the build, .bench-build/bench/.
 */
function comparedLibraries(): Promise<ComparedLibraries> {
  return import(new URL('../../bench/compare/index.mjs', import.meta.url).href) as Promise<ComparedLibraries>;
}

export async function run(): Promise<ReportRow[]> {
  const base = await generate();
  const root = path.join(base, 'skills');
  const rows: ReportRow[] = [];
  try {
    const check = await scanSkillSources({ extra: [root] });
    const totalBytes = COUNT * Buffer.byteLength(BODY);
    const { MastraWorkspace, LocalFilesystem, volt } = await comparedLibraries();
    const mastraCount = (await new MastraWorkspace({ filesystem: new LocalFilesystem({ basePath: base }), skills: ['skills'] }).skills!.list()).length;
    const voltWorkspace = new volt.Workspace({ filesystem: { backend: new volt.NodeFilesystemBackend({ rootDir: base }) }, skills: { rootPaths: ['/skills'] } });
    const voltSkills = (voltWorkspace as unknown as { skills: { discoverSkills(o: { refresh: boolean }): Promise<{ name: string }[]> } }).skills;
    const voltFound = await voltSkills.discoverSkills({ refresh: true });
    let sink = 0;
    const [ours, mastra, voltagent, floor] = await compare(
      [
        { name: 'skillstate', fn: async () => { sink += (await scanSkillSources({ extra: [root] })).entries.length; } },
        { name: 'mastra', fn: async () => { sink += (await new MastraWorkspace({ filesystem: new LocalFilesystem({ basePath: base }), skills: ['skills'] }).skills!.list()).length; } },
        { name: 'voltagent', fn: async () => { sink += (await voltSkills.discoverSkills({ refresh: true })).length; } },
        { name: 'floor', fn: async () => { sink += readFloor(root); } },
      ],
      { rounds: 5, roundMs: 1 },
    );
    rows.push({
      suite: 'discovery',
      name: `skillstate, ${COUNT} folders (front matter only)`,
      value: formatNs(ours!.ns),
      target: '≤ 150 ms',
      pass: ours!.ns <= 150e6 && check.entries.length === COUNT,
    });
    rows.push({
      suite: 'discovery',
      name: 'I/O floor: list the folders, read 1 KiB of each SKILL.md (no parsing)',
      value: formatNs(floor!.ns),
      anchor: `skillstate ${formatNs(ours!.ns)}`,
      ratio: pairedRatio(ours!, floor!),
      target: 'report (skillstate ÷ floor)',
    });
    rows.push({
      suite: 'discovery',
      name: 'skillstate bytes read (bodies untouched)',
      value: `${formatBytes(check.stats.bytesRead)} of ${formatBytes(totalBytes + COUNT * 200)}`,
      target: '< 5% of the tree',
      pass: check.stats.bytesRead < totalBytes * 0.05,
    });
    rows.push({ suite: 'discovery', name: `@mastra/core Workspace skills.list() (${mastraCount} found)`, value: formatNs(mastra!.ns), anchor: `skillstate ${formatNs(ours!.ns)}`, ratio: pairedRatio(mastra!, ours!), target: 'comparison (mastra ÷ skillstate)' });
    rows.push({
      suite: 'discovery',
      name: `@voltagent/core Workspace discoverSkills (${new Set(voltFound.map((s) => s.name)).size} names, ${voltFound.length} entries)`,
      value: formatNs(voltagent!.ns),
      anchor: `skillstate ${formatNs(ours!.ns)}`,
      ratio: pairedRatio(voltagent!, ours!),
      target: 'comparison (voltagent ÷ skillstate)',
    });
    rows.push(...(await reload(root, ours!.ns)));
    if (sink < 0) console.log(sink);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
  return rows;
}
