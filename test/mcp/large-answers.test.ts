/**
 * skillstate as an MCP client over Streamable HTTP, against a server whose answer never ends: a
 * real local HTTP server, written by hand, that streams an endless body for a tool's result (as
 * JSON and as an SSE event) and for a remote skill's file. The client stops reading past its limit
 * (`maxOutputBytes` and the JSON-RPC envelope's room; the largest skill file for remote skills)
 * and fails with a typed error naming the server and the limit; the server sees its answer cut off.
 */
import { createHash } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createAgentSystem, createDocumentSkillRegistry, defineAgent } from 'skillstate';
import { mcpSkill } from 'skillstate/mcp';
import { mountMcpSkills } from '../../src/mcp/remote-skills.js';
import { answerJson, listening, readBody } from './handmade-server.js';
import { onCleanup } from './processes.js';

const MANIFEST = '---\nname: notes\ndescription: Takes notes. Use when asked to note something.\n---\n\n# Notes\n';
const CHUNK = Buffer.alloc(64 * 1024, 'y');
/** The room a message gets past `maxOutputBytes` for its envelope (64 KiB), as the client counts it. */
const ENVELOPE = 64 * 1024;

/** One endless answer the server started: the bytes it wrote, and a promise of the client hanging up. */
interface Flood {
  written: number;
  ended: Promise<void>;
}

/** An MCP server over HTTP, stateless, whose `flood_*` tools and `resources/read` answer without end. */
async function endlessServer() {
  const floods: Flood[] = [];
  const flood = (res: ServerResponse, contentType: string, head: string) => {
    const state: Flood = { written: 0, ended: new Promise((resolve) => res.once('close', () => resolve())) };
    floods.push(state);
    res.writeHead(200, { 'content-type': contentType });
    res.write(head);
    // Written as fast as the client reads: what is written is what the client took in, give or take the sockets' buffers.
    const pump = () => {
      while (!res.destroyed) {
        state.written += CHUNK.length;
        if (!res.write(CHUNK)) return void res.once('drain', pump);
      }
    };
    pump();
  };
  const http = createServer((req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    void readBody(req).then((text) => {
      const { id, method, params } = JSON.parse(text) as { id?: number; method: string; params: Record<string, any> };
      if (id === undefined) return void res.writeHead(202).end();
      if (method === 'initialize') {
        const capabilities = { tools: {}, resources: {}, extensions: { 'io.modelcontextprotocol/skills': {} } };
        return answerJson(res, id, { protocolVersion: params.protocolVersion, capabilities, serverInfo: { name: 'endless', version: '1.0.0' } });
      }
      if (method === 'tools/list') {
        const tools = ['flood_json', 'flood_sse', 'small_sse'].map((name) => ({ name, inputSchema: { type: 'object' } }));
        return answerJson(res, id, { tools });
      }
      if (method === 'tools/call' && params.name === 'small_sse') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const answer = JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'small' }] } });
        return void res.end(`event: message\ndata: ${answer}\n\n`);
      }
      const head = `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"`;
      if (method === 'tools/call' && params.name === 'flood_json') return flood(res, 'application/json', head);
      if (method === 'tools/call' && params.name === 'flood_sse') return flood(res, 'text/event-stream', `event: message\ndata: ${head}`);
      if (method === 'skills/list') {
        const uri = 'skill://notes/SKILL.md';
        const digest = `sha256:${createHash('sha256').update(MANIFEST).digest('hex')}`;
        const skills = [{ uri, frontmatter: { name: 'notes', description: 'Takes notes. Use when asked to note something.' }, resources: [{ uri, digest, size: Buffer.byteLength(MANIFEST) }] }];
        return answerJson(res, id, { skills });
      }
      if (method === 'resources/read') return flood(res, 'application/json', `{"jsonrpc":"2.0","id":${id},"result":{"contents":[{"uri":"${String(params.uri)}","text":"`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } }));
    });
  });
  return { url: await listening(http), floods };
}

describe('an MCP server over HTTP whose answer never ends', () => {
  it.each(['flood_json', 'flood_sse'])('%s: the call fails with mcp_output_too_large naming the server and the limit, having read just past it, and the next call is answered', async (tool) => {
    const server = await endlessServer();
    const system = createAgentSystem({ onUnhandledDiagnostic: () => {} });
    onCleanup(() => system.shutdown());
    const maxOutputBytes = 256 * 1024;
    const skill = await mcpSkill({ name: 'endless', url: server.url, maxOutputBytes, callTimeout: 600_000 });
    const ref = system.spawn(defineAgent({ name: 'host', skills: [skill] }), { id: 'host' });
    await expect.poll(() => ref.getSnapshot().lifecycles.endless).toBe('active');

    const failed = (await ref.callTool(tool, {}).then(
      () => undefined,
      (error: unknown) => error,
    )) as { code: string; message: string; details: { reason: string; details: { size: number; limit: number; cutOff?: boolean } } };
    expect(failed).toMatchObject({ code: 'action_failed', details: { reason: 'mcp_output_too_large', details: { limit: maxOutputBytes, cutOff: true } } });
    expect(failed.message).toContain(`tool '${tool}' of MCP server 'endless' answered more than the limit of ${maxOutputBytes} bytes`);
    // What the client read of the answer: past the limit by at most one chunk of the socket, no more.
    const read = failed.details.details.size;
    expect(read).toBeGreaterThan(maxOutputBytes + ENVELOPE);
    expect(read).toBeLessThan(maxOutputBytes + ENVELOPE + 1024 * 1024);
    // The client hung up: the server's endless answer ended, having written only what the sockets could hold.
    const [flood] = server.floods;
    await flood!.ended;
    expect(flood!.written).toBeLessThan(64 * 1024 * 1024);

    expect(await ref.callTool('small_sse', {})).toBe('small');
  });

  it("a remote skill's file: loading the skill fails with skill_unverified (size), reading stopped past the largest file a skill may hold", async () => {
    const server = await endlessServer();
    const registry = createDocumentSkillRegistry({ onDiagnostic: () => {} });
    const mount = await mountMcpSkills(registry, { name: 'endless', url: server.url });
    onCleanup(() => mount.close());
    expect(mount.skills()).toEqual(['notes']);
    const refused = await registry.content('notes').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({ code: 'skill_unverified', details: { reason: 'size', server: 'endless', uri: 'skill://notes/SKILL.md' } });
    expect((refused as Error).message).toMatch(/the server answered more than \d+ bytes \(reading stopped there\) where the entry says \d+/);
    const [flood] = server.floods;
    await flood!.ended;
    // The largest skill is 16 MiB, 22 MiB and some as base64: the read stops a little past that.
    expect(flood!.written).toBeLessThan(96 * 1024 * 1024);
  });
});
