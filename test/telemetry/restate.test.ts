/**
 * The Restate host's spans, from a real Restate server and a service process tracing to a file:
 * an agent's steps, and a model turn with its model call and tool call, nested as in-process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectRestate } from '../../src/restate/index.js';
import { startRestateServer, type LocalRestateServer } from '../../src/restate/server.js';
import { eventually } from '../restate/harness.js';
import { filedSpans, type FiledSpan } from './fixtures/file-tracing.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
let server: LocalRestateServer;
let service: ChildProcess;
let folder: string;
let spansFile: string;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'skillstate-otel-restate-'));
  spansFile = join(folder, 'spans.jsonl');
  server = await startRestateServer();
  service = spawn(process.execPath, ['--conditions=skillstate-source', '--import', 'tsx', 'test/telemetry/fixtures/traced-restate-service.ts', '0'], {
    cwd: root,
    env: { ...process.env, SPANS_FILE: spansFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    service.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /listening (\d+)/.exec(output);
      if (listening) resolve(Number(listening[1]));
    });
    service.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    service.once('exit', (code) => reject(new Error(`service process exited with ${code}:\n${output}`)));
  });
  await server.register(`http://127.0.0.1:${port}`);
});

afterAll(async () => {
  if (service && service.exitCode === null) {
    const exited = new Promise((resolve) => service.once('exit', resolve));
    service.kill('SIGKILL');
    await exited;
  }
  await server?.close();
  rmSync(folder, { recursive: true, force: true });
});

it('a model turn on the Restate host: steps, the turn, its model call and tool call as spans, one trace', async () => {
  const client = connectRestate(server.ingressUrl);
  const agent = await client.spawn('chatter', { id: 'traced' });
  expect(await agent.call('chat.message', { text: 'add 2 and 3' })).toBe('The total is 5.');
  const ended = (spans: FiledSpan[]) => spans.find((span) => span.name === 'invoke_agent chatter' && span.attributes['skillstate.turn.phase'] === 'answered');
  await eventually('the turn span to end', async () => ended(filedSpans(spansFile)) !== undefined);
  const spans = filedSpans(spansFile);
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  const parentOf = (span: FiledSpan | undefined) => (span?.parentSpanId === undefined ? undefined : byId.get(span.parentSpanId));

  const message = spans.find((span) => span.name === 'step chat.message' && span.attributes['skillstate.agent.id'] === 'traced');
  expect(message?.attributes).toMatchObject({ 'skillstate.agent.definition': 'chatter', 'skillstate.step.item': 'signal', 'skillstate.step.outcome': 'ok' });
  const turn = ended(spans)!;
  expect(turn.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': 'traced' });
  // The turn continues the trace of the step that started it, though Restate ran it in another invocation.
  expect(turn.traceId).toBe(message!.traceId);
  const tool = spans.find((span) => span.name === 'execute_tool add' && span.traceId === turn.traceId);
  expect(tool?.attributes).toMatchObject({ 'gen_ai.tool.name': 'add', 'gen_ai.operation.name': 'execute_tool' });
  expect(parentOf(tool)?.name).toBe('invoke_agent chatter');
  // The tool's step ran in the agent's own handler, under the tool call's span.
  const step = spans.find((span) => span.name === 'step run add' && span.parentSpanId === tool!.spanId);
  expect(step?.attributes).toMatchObject({ 'skillstate.agent.id': 'traced', 'skillstate.step.item': 'run' });
  // The action itself, journaled, is the step's child.
  const action = spans.find((span) => span.name === "action 'add'" && span.parentSpanId === step!.spanId);
  expect(action?.attributes).toMatchObject({ 'skillstate.action.name': 'add' });
  const chats = spans.filter((span) => span.name.startsWith('chat ') && span.traceId === turn.traceId);
  expect(chats.length).toBeGreaterThanOrEqual(2);
  for (const chat of chats) {
    expect(chat.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': expect.any(String), 'gen_ai.request.model': expect.any(String) });
    expect(parentOf(chat)?.name).toBe('invoke_agent chatter');
  }
});
