/**
 * The host side of MCP's Skills extension: loading skills a server publishes, each file checked
 * against its entry (`mountMcpSkills`: `SKILL.md` read, size and digest checked, front matter
 * parsed and compared, then every resource read and checked), against the SDK's client reading
 * the same files with `resources/read` and checking nothing. Both read the same 50 skills (a
 * SKILL.md of about 2 KiB, a 4 KiB reference and a 1 KiB script each: 150 files) one file at a
 * time from `serveMcp` on Streamable HTTP in this process. Each verified run mounts afresh (the
 * listing is not timed), so no file comes from the mount's cache; the two are timed alternately.
 */
import { rm } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createAgentSystem, createDocumentSkillRegistry, createSkillTools, defineAgent, discoverSkills } from '../src/index.js';
import { mountMcpSkills, serveMcp } from '../src/mcp/index.js';
import { formatNs, type ReportRow } from './harness.js';
import { generateSkillFolders, median, SKILL_FILES } from './skill-folders.js';

const COUNT = 50;
const RUNS = 15;

export async function run(): Promise<ReportRow[]> {
  const base = await generateSkillFolders(COUNT, 'skillstate-bench-mcp-host-');
  const system = createAgentSystem();
  try {
    const served = await discoverSkills({ extra: [base], project: false, user: false, bundled: false });
    const agent = system.spawn(defineAgent({ name: 'bench', skills: [createSkillTools(served)], registry: served }), { id: 'bench' });
    const endpoint = await serveMcp(agent, { transport: 'http', registry: served });
    const names = served.names();
    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint.url!)));

    const unverified = async () => {
      let bytes = 0;
      for (const name of names) {
        for (const file of SKILL_FILES) {
          const { contents } = await client.readResource({ uri: `skill://${name}/${file}` });
          bytes += 'text' in contents[0]! ? contents[0].text.length : 0;
        }
      }
      return bytes;
    };
    const verified = async () => {
      const registry = createDocumentSkillRegistry();
      const mount = await mountMcpSkills(registry, { name: 'bench', url: endpoint.url! });
      const start = performance.now();
      let bytes = 0;
      for (const name of names) {
        const loaded = await registry.content(name);
        bytes += loaded.instructions.length;
        for (const resource of loaded.resources.values()) bytes += (await resource.read()).length;
      }
      const ns = (performance.now() - start) * 1e6;
      await mount.close();
      return { ns, bytes };
    };

    await unverified();
    await verified();
    const plain: number[] = [];
    const checked: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now();
      await unverified();
      plain.push((performance.now() - start) * 1e6);
      checked.push((await verified()).ns);
    }
    await client.close();
    await endpoint.close();
    const ratio = median(checked) / median(plain);
    return [
      {
        suite: 'mcp-host',
        name: `load ${COUNT} skills over MCP (${COUNT * SKILL_FILES.length} files), each verified against its entry`,
        value: formatNs(median(checked)),
        anchor: `resources/read unverified: ${formatNs(median(plain))}`,
        ratio,
        target: '≤ 1.3×',
        pass: ratio <= 1.3,
      },
    ];
  } finally {
    await system.shutdown();
    await rm(base, { recursive: true, force: true });
  }
}
