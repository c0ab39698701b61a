/**
 * `skills/list` of MCP's Skills extension over 1,000 generated skills (each a SKILL.md of about
 * 2 KiB, a 4 KiB reference and a 1 KiB script: 3,000 files, 7 MiB), paged through to the end (10
 * pages), with the SDK's client and `createMcpServer` in one process on the in-memory transport.
 * Cold: every digest and every SKILL.md verdict forgotten before each listing (the files stay in
 * the operating system's cache: this is the server's work, not the disk's). Warm: digests cached
 * by size and modification time, so a listing stats each file and hashes none. The floor: a
 * `readdir` of each skill's folders and a `stat` of each of its files, 16 skills at a time (as the
 * server reads them), with nothing else done.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { z } from 'zod';
import { createAgentSystem, defineAgent, discoverSkills } from '../src/index.js';
import { createMcpServer } from '../src/mcp/index.js';
import { forgetServedSkills } from '../src/mcp/skill-catalog.js';
import { formatNs, type ReportRow } from './harness.js';
import { generateSkillFolders, median, SKILL_FILES } from './skill-folders.js';

const COUNT = 1000;
const RUNS = 11;
const ListResult = z.object({ skills: z.array(z.unknown()), nextCursor: z.string().optional() });

export async function run(): Promise<ReportRow[]> {
  const base = await generateSkillFolders(COUNT, 'skillstate-bench-mcp-skills-');
  const system = createAgentSystem();
  try {
    const registry = await discoverSkills({ extra: [base] });
    const agent = system.spawn(defineAgent({ name: 'bench', skills: [] }), { id: 'bench' });
    const [near, far] = InMemoryTransport.createLinkedPair();
    await createMcpServer(agent, { registry, onDiagnostic: (item) => console.error(item.message) }).connect(far);
    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(near);
    const listAll = async () => {
      let count = 0;
      let cursor: string | undefined;
      do {
        const page = await client.request({ method: 'skills/list', params: cursor ? { cursor } : {} }, ListResult);
        count += page.skills.length;
        cursor = page.nextCursor;
      } while (cursor);
      if (count !== COUNT) throw new Error(`listed ${count} skills, not ${COUNT}`);
    };
    const time = async (before: () => void) => {
      const runs: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        before();
        const start = performance.now();
        await listAll();
        runs.push((performance.now() - start) * 1e6);
      }
      return median(runs);
    };
    const names = await readdir(base);
    const floor = async () => {
      for (let i = 0; i < names.length; i += 16) {
        await Promise.all(
          names.slice(i, i + 16).map(async (name) => {
            const dir = path.join(base, name);
            await Promise.all([readdir(dir), readdir(path.join(dir, 'references')), readdir(path.join(dir, 'scripts'))]);
            await Promise.all(SKILL_FILES.map((file) => stat(path.join(dir, file))));
          }),
        );
      }
    };
    await listAll();
    const cold = await time(forgetServedSkills);
    const warm = await time(() => {});
    const floorRuns: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now();
      await floor();
      floorRuns.push((performance.now() - start) * 1e6);
    }
    const bare = median(floorRuns);
    await client.close();
    return [
      { suite: 'mcp-skills', name: `skills/list, ${COUNT} skills (3 files each, 10 pages), cold: every file hashed`, value: formatNs(cold), target: 'informational' },
      { suite: 'mcp-skills', name: `skills/list, ${COUNT} skills, warm: digests cached by size and mtime`, value: formatNs(warm), anchor: `cold: ${formatNs(cold)}`, ratio: warm / cold, target: 'informational' },
      { suite: 'mcp-skills', name: `skills/list, ${COUNT} skills, warm, against reading the folders and stating the files`, value: formatNs(warm), anchor: `readdir + stat: ${formatNs(bare)}`, ratio: warm / bare, target: 'informational' },
    ];
  } finally {
    await system.shutdown();
    await rm(base, { recursive: true, force: true });
  }
}
