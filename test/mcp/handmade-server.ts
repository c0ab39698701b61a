/**
 * Test helper: the pieces of the MCP servers over HTTP that tests write by hand, to answer as no
 * real server would (without end, with headers only, compressed...). Each server listens on a
 * port of 127.0.0.1 the system chooses and is closed after the test.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onCleanup } from './processes.js';

/** The body of a request, as text. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => resolve(text));
  });
}

/** Answers the JSON-RPC request `id` with `result`, as a JSON body. */
export function answerJson(res: ServerResponse, id: unknown, result: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id, result }));
}

/** Starts `http` listening, to be closed (its connections too) after the test; resolves with its `/mcp` URL. */
export async function listening(http: Server): Promise<string> {
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  onCleanup(() => new Promise<void>((resolve) => http.close(() => resolve())));
  onCleanup(() => http.closeAllConnections());
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
}
