/**
 * An MCP tool call round trip through `serveMcp`, against a bare `McpServer` with one
 * hand-registered tool doing the same state change (increment a count, answer it as structured
 * content), over stdio and over Streamable HTTP. Each server is its own process; the client is
 * the SDK's, in this process, and the calls alternate between the two servers in the same rounds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createAgentSystem, defineAgent } from '../src/index.js';
import { createMcpServer } from '../src/mcp/index.js';
import { counter } from '../skills/index.js';
import { requestScopedFetch } from '../src/mcp/fetch.js';
import { bareServer } from './mcp-server.js';
import { compare, compiled, formatNs, pairedRatio, type ReportRow } from './harness.js';

/** The server processes run the same build as this one: compiled, or from source through tsx. */
const SERVER = fileURLToPath(new URL(`./mcp-server.${compiled ? 'js' : 'ts'}`, import.meta.url));
const NODE_ARGS = compiled ? [SERVER] : ['--conditions=skillstate-source', '--import', 'tsx', SERVER];

async function stdioClient(kind: string): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [...NODE_ARGS, kind, 'stdio'], stderr: 'inherit' }));
  return client;
}

async function httpClient(kind: string, processes: ChildProcess[]): Promise<Client> {
  const child = spawn(process.execPath, [...NODE_ARGS, kind, 'http'], { stdio: ['ignore', 'ignore', 'pipe'] });
  processes.push(child);
  const url = await new Promise<string>((resolve, reject) => {
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /listening at (\S+)/.exec(stderr);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`${kind} http server exited with ${code}: ${stderr}`)));
  });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  // Both clients alike: the SDK's transport with the fetch `mcpSkill` uses, which leaves no abort listener behind per request.
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: requestScopedFetch }));
  return client;
}

export async function run(): Promise<ReportRow[]> {
  const processes: ChildProcess[] = [];
  const rows: ReportRow[] = [];
  try {
    for (const transport of ['stdio', 'http'] as const) {
      const connect = (kind: string) => (transport === 'stdio' ? stdioClient(kind) : httpClient(kind, processes));
      const bare = await connect('bare');
      const ours = await connect('skillstate');
      const call = (client: Client) => () => client.callTool({ name: 'increment', arguments: {} });
      const [anchor, subject] = await compare(
        [
          { name: 'bare McpServer', fn: call(bare) },
          { name: 'serveMcp', fn: call(ours) },
        ],
        { rounds: 21, roundMs: transport === 'stdio' ? 100 : 300, warmupMs: 4_000 },
      );
      const ratio = pairedRatio(subject!, anchor!);
      rows.push({
        suite: 'mcp',
        name: `tool call round trip, ${transport === 'stdio' ? 'stdio' : 'Streamable HTTP'}`,
        value: formatNs(subject!.ns),
        anchor: `bare McpServer: ${formatNs(anchor!.ns)}`,
        ratio,
        target: '≤ 1.3×',
        pass: ratio <= 1.3,
      });
      await Promise.all([bare.close(), ours.close()]);
    }
    rows.push(await inProcess());
  } finally {
    for (const child of processes) child.kill('SIGTERM');
  }
  return rows;
}

/** Both servers in this process on the SDK's in-memory transport: what the server side alone costs. */
async function inProcess(): Promise<ReportRow> {
  const system = createAgentSystem();
  const agent = system.spawn(defineAgent({ name: 'bench', skills: [counter] }), { id: 'bench' });
  const connect = async (server: { connect(transport: InMemoryTransport): Promise<void> }) => {
    const [near, far] = InMemoryTransport.createLinkedPair();
    await server.connect(far);
    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(near);
    return client;
  };
  const bare = await connect(bareServer());
  const ours = await connect(createMcpServer(agent));
  const call = (client: Client) => () => client.callTool({ name: 'increment', arguments: {} });
  const [anchor, subject] = await compare([
    { name: 'bare McpServer', fn: call(bare) },
    { name: 'createMcpServer', fn: call(ours) },
  ]);
  await system.shutdown();
  return {
    suite: 'mcp',
    name: 'tool call, client and server in one process (in-memory transport)',
    value: formatNs(subject!.ns),
    anchor: `bare McpServer: ${formatNs(anchor!.ns)}`,
    ratio: pairedRatio(subject!, anchor!),
    target: 'informational',
  };
}
