/**
 * An MCP tool call between two processes is one trace: the client's span goes in the request's
 * `_meta` as `traceparent`, and the server (another process, tracing to a file) continues it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { trace, type Span } from '@opentelemetry/api';
import { expect, it } from 'vitest';
import { createAgentSystem, defineAgent } from 'skillstate';
import { mcpSkill } from 'skillstate/mcp';
import { childSystemId } from '../../machines/skill-lifecycle.js';
import { eventually, onCleanup } from '../mcp/processes.js';
import { filedSpans } from './fixtures/file-tracing.js';
import { recordSpans } from './fixtures.js';

const SERVER = fileURLToPath(new URL('./fixtures/traced-mcp-server.ts', import.meta.url));

it('a tool call from one process to an MCP server in another is one trace, the server span a child of the client span', async () => {
  const recorded = recordSpans();
  const folder = mkdtempSync(join(tmpdir(), 'skillstate-otel-mcp-'));
  onCleanup(() => rmSync(folder, { recursive: true, force: true }));
  const spansFile = join(folder, 'spans.jsonl');
  // The server compiles its TypeScript as it starts: on a busy machine that alone can take over the default 10 s.
  const remote = await mcpSkill({ name: 'remote', command: process.execPath, args: ['--import', 'tsx', SERVER], env: { NODE_OPTIONS: process.env.NODE_OPTIONS ?? '', SPANS_FILE: spansFile }, connectTimeout: 40_000 });
  const system = createAgentSystem({ callTimeout: 30_000, onUnhandledDiagnostic: () => {}, onUnhandledError: () => {} });
  onCleanup(() => system.shutdown());
  const ref = system.spawn(defineAgent({ name: 'host', skills: [remote] }), { id: 'host' });

  await trace.getTracer('app').startActiveSpan('request', async (span: Span) => {
    await eventually(() => (ref.actor.system.get(childSystemId('host', 'remote', 'connection'))?.getSnapshot() as { value?: unknown } | undefined)?.value === 'ready', 'the connection is ready', 30_000);
    await expect(ref.callTool('add', { a: 2, b: 3 })).resolves.toMatchObject({ result: 5 });
    span.end();
  });

  const client = recorded.named('tools/call add').at(-1)!;
  expect(client.kind).toBe(2); // CLIENT
  expect(client.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'add', 'gen_ai.operation.name': 'execute_tool' });
  const request = recorded.one('request');
  expect(client.spanContext().traceId).toBe(request.spanContext().traceId);

  await system.shutdown();
  await eventually(() => filedSpans(spansFile).some((span) => span.name === 'step run add'), 'the server wrote its spans', 30_000);
  const served = filedSpans(spansFile);
  const server = served.find((span) => span.name === 'tools/call add' && span.parentSpanId === client.spanContext().spanId);
  expect(server).toMatchObject({ kind: 1, traceId: request.spanContext().traceId, attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'add' } }); // SERVER
  // The agent's step on the server is a child of the server span.
  const step = served.find((span) => span.name === 'step run add' && span.parentSpanId === server!.spanId);
  expect(step?.attributes).toMatchObject({ 'skillstate.agent.id': 'served' });
});
