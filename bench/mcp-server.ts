/**
 * The servers the `mcp` benchmark talks to, one per process: `skillstate` serves an agent with the
 * counter skill through `serveMcp`; `bare` is an `McpServer` with one hand-registered `increment`
 * tool doing the same state change. Usage: `mcp-server.ts <skillstate|bare> <stdio|http>`; over
 * HTTP the URL is printed on stderr.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { createAgentSystem, defineAgent } from '../src/index.js';
import { serveMcp } from '../src/mcp/index.js';
import { counter } from '../skills/index.js';

/** The anchor: one hand-registered tool keeping its count in a variable. */
export function bareServer(): McpServer {
  let count = 0;
  const server = new McpServer({ name: 'bare', version: '1.0.0' });
  server.registerTool(
    'increment',
    { description: 'Add the step (or the given amount) to the count', inputSchema: { by: z.number().int().optional() } },
    ({ by }) => {
      count += by ?? 1;
      const output = { count };
      return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
    },
  );
  return server;
}

const main = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
const [kind, transport] = main ? process.argv.slice(2) : [];
if (!main) {
  // Imported for bareServer: serve nothing.
} else if (kind === 'skillstate') {
  const system = createAgentSystem();
  const agent = system.spawn(defineAgent({ name: 'bench', skills: [counter] }), { id: 'bench' });
  const endpoint = await serveMcp(agent, transport === 'http' ? { transport: 'http' } : { transport: 'stdio' });
  if (endpoint.url) process.stderr.write(`listening at ${endpoint.url}\n`);
} else if (transport === 'stdio') {
  await bareServer().connect(new StdioServerTransport());
} else {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (known) return void known.handleRequest(req, res);
    const session: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, session),
    });
    void bareServer()
      .connect(session)
      .then(() => session.handleRequest(req, res));
  });
  http.listen(0, '127.0.0.1', () => process.stderr.write(`listening at http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp\n`));
}
