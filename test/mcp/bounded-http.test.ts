/**
 * skillstate as an MCP client over Streamable HTTP, against two answers a real local HTTP server
 * (written by hand) sends:
 *
 * - headers, then nothing: the call is bounded by the client's request timeout (`callTimeout`),
 *   fails with `mcp_timeout` naming the server and the tool, and the client hangs up on the answer
 *   it gave up on rather than holding its socket for as long as the connection lasts;
 * - a gzip-compressed body (`content-encoding: gzip`): `fetch` decompresses it before anything of
 *   ours reads it, so the limit counts decompressed bytes. A body a few kilobytes compressed that
 *   decompresses past the limit is cut off there; a body whose compressed length (its
 *   `Content-Length`) is past the limit but whose content is within it is read whole.
 */
import { createServer } from 'node:http';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createAgentSystem, defineAgent } from 'skillstate';
import { mcpSkill } from 'skillstate/mcp';
import { boundedAnswer } from '../../src/mcp/bounded-answer.js';
import { OUTPUT_TOO_LARGE } from '../../src/mcp/stdio-transport.js';
import { answerJson, listening, readBody } from './handmade-server.js';
import { onCleanup } from './processes.js';

/** The room a message gets past `maxOutputBytes` for its envelope (64 KiB), as the client counts it. */
const ENVELOPE = 64 * 1024;
/** What the gzip bomb decompresses to: 16 MiB of text. */
const BOMB_TEXT = 16 * 1024 * 1024;

/** A stateless MCP server over HTTP whose `silent` tool answers headers only, and `bomb` a gzip bomb. */
async function hostileServer() {
  /** Each answer that `silent` started, and a promise of the client hanging up on it. */
  const silences: Promise<void>[] = [];
  /** Requests cancelled by the client (`notifications/cancelled`), by id. */
  const cancelled: unknown[] = [];
  const http = createServer((req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    void readBody(req).then((text) => {
      const { id, method, params } = JSON.parse(text) as { id?: number; method: string; params: Record<string, any> };
      if (method === 'notifications/cancelled') cancelled.push(params.requestId);
      if (id === undefined) return void res.writeHead(202).end();
      if (method === 'initialize') return answerJson(res, id, { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'hostile', version: '1.0.0' } });
      if (method === 'tools/list') return answerJson(res, id, { tools: ['silent', 'bomb', 'small'].map((name) => ({ name, inputSchema: { type: 'object' } })) });
      if (method === 'tools/call' && params.name === 'silent') {
        silences.push(new Promise((resolve) => res.once('close', () => resolve())));
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.flushHeaders();
      }
      if (method === 'tools/call' && params.name === 'bomb') {
        const answer = JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'y'.repeat(BOMB_TEXT) }] } });
        const body = gzipSync(answer);
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(body.length) });
        return void res.end(body);
      }
      if (method === 'tools/call' && params.name === 'small') return answerJson(res, id, { content: [{ type: 'text', text: 'small' }] });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } }));
    });
  });
  return { url: await listening(http), silences, cancelled };
}

/** An agent with the hostile server mounted as the skill `hostile`, connected. */
async function hostAgent(url: string, limits: { callTimeout: number; maxOutputBytes?: number }) {
  const system = createAgentSystem({ onUnhandledDiagnostic: () => {} });
  onCleanup(() => system.shutdown());
  const skill = await mcpSkill({ name: 'hostile', url, ...limits });
  const ref = system.spawn(defineAgent({ name: 'host', skills: [skill] }), { id: 'host' });
  onCleanup(() => ref.stop().catch(() => {}));
  return ref;
}

/** What a promise rejected with. */
function rejection(promise: Promise<unknown>): Promise<any> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('an MCP server over HTTP that sends the headers of its answer, then nothing', () => {
  it('the call fails after callTimeout with mcp_timeout naming the server and the tool; the client hangs up on that answer, and the next call is answered', async () => {
    const server = await hostileServer();
    const ref = await hostAgent(server.url, { callTimeout: 300 });
    await expect.poll(() => ref.getSnapshot().lifecycles.hostile).toBe('active');

    const failed = await rejection(ref.callTool('silent', {}));
    expect(failed).toMatchObject({ code: 'action_failed', details: { reason: 'mcp_timeout' } });
    expect(failed.message).toContain(`MCP server 'hostile' (${server.url}), calling 'silent': no answer in time`);
    // The client stopped reading the answer that never came, and told the server it gave up (a
    // request of its own, which may arrive after the hang-up).
    await server.silences[0];
    await expect.poll(() => server.cancelled).toHaveLength(1);
    expect(await ref.callTool('small', {})).toBe('small');
    // The answer given up on is not taken for a malformed message: a second silence is a time-out too.
    expect(await rejection(ref.callTool('silent', {}))).toMatchObject({ details: { reason: 'mcp_timeout' } });
    await server.silences[1];
  });
});

describe('an MCP server over HTTP whose answer is gzip-compressed', () => {
  it('a gzip bomb: the call fails with mcp_output_too_large, reading stopped just past the limit in decompressed bytes', async () => {
    const server = await hostileServer();
    const maxOutputBytes = 64 * 1024;
    const ref = await hostAgent(server.url, { callTimeout: 60_000, maxOutputBytes });
    await expect.poll(() => ref.getSnapshot().lifecycles.hostile).toBe('active');

    const failed = await rejection(ref.callTool('bomb', {}));
    expect(failed).toMatchObject({ code: 'action_failed', details: { reason: 'mcp_output_too_large', details: { limit: maxOutputBytes, cutOff: true } } });
    expect(failed.message).toContain(`tool 'bomb' of MCP server 'hostile' answered more than the limit of ${maxOutputBytes} bytes`);
    // Counted in decompressed bytes (the compressed body is a few kilobytes), and no further than a chunk past the limit.
    const read = failed.details.details.size as number;
    expect(read).toBeGreaterThan(maxOutputBytes + ENVELOPE);
    expect(read).toBeLessThan(maxOutputBytes + ENVELOPE + 1024 * 1024);
    expect(await ref.callTool('small', {})).toBe('small');
  });

  /** `boundedAnswer` over a real `fetch` of a real server answering `body` with these headers. */
  async function fetchBounded(body: Buffer, headers: Record<string, string>, limit: number): Promise<string> {
    const http = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length), ...headers });
      res.end(body);
    });
    const url = await listening(http);
    const sent = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'x' } });
    const response = await fetch(url, { method: 'POST', body: sent });
    return boundedAnswer(response, sent, 'srv', limit).text();
  }

  it('the limit applies to the decompressed body: past it is cut off, though the compressed body is small', async () => {
    const answer = JSON.stringify({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'y'.repeat(1024 * 1024) }] } });
    const compressed = gzipSync(answer);
    expect(compressed.length).toBeLessThan(64 * 1024);
    const told = JSON.parse(await fetchBounded(compressed, { 'content-encoding': 'gzip' }, 64 * 1024)) as { id: number; error: { code: number; data: { size: number; limit: number; cutOff?: boolean } } };
    expect(told).toMatchObject({ id: 7, error: { code: OUTPUT_TOO_LARGE, data: { limit: 64 * 1024, cutOff: true } } });
    expect(told.error.data.size).toBeGreaterThan(64 * 1024);
  });

  it('a compressed body longer than the limit whose content is within it is read whole (its Content-Length is not the length read)', async () => {
    const answer = JSON.stringify({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'z'.repeat(4000) }] } });
    // Stored, not deflated: gzip's framing makes it longer than what it holds.
    const stored = gzipSync(answer, { level: 0 });
    const limit = Buffer.byteLength(answer);
    expect(stored.length).toBeGreaterThan(limit);
    expect(await fetchBounded(stored, { 'content-encoding': 'gzip' }, limit)).toBe(answer);
  });
});
