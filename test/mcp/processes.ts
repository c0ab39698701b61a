/**
 * Test helper: the real `skillstate mcp` command as a subprocess, reached by the SDK's own client
 * over stdio or over Streamable HTTP. Every process and client is closed after the test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type Notification } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, expect } from 'vitest';

export const BIN = fileURLToPath(new URL('../../bin/skillstate.js', import.meta.url));
export const BUNDLED = fileURLToPath(new URL('../../skills', import.meta.url));
export const FIXTURE_AGENT = fileURLToPath(new URL('./fixtures/agent.ts', import.meta.url));

const cleanups: (() => Promise<unknown> | void)[] = [];

afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** Registers something to undo after the current test. */
export function onCleanup(cleanup: () => Promise<unknown> | void): void {
  cleanups.push(cleanup);
}

/** Sources that make a test see only the skills it names. */
export const ONLY = ['--no-user', '--no-project', '--no-bundled'];
/**
 * The environment a `skillstate mcp` started over stdio needs to run the sources: the MCP SDK gives
 * a stdio server only a few variables of its own (not NODE_OPTIONS, which holds the source
 * condition), and without it the command runs dist/ when a build is there, one that another test
 * may be writing at that moment.
 */
export const SOURCE_ENV = { NODE_OPTIONS: process.env.NODE_OPTIONS ?? '' };

export interface Connected {
  client: Client;
  /** Every notification the client received, in order. */
  notifications: Notification[];
  /** Text the server wrote to stderr. */
  stderr(): string;
  /** The server process's id. */
  pid: number;
}

function newClient(notifications: Notification[]): Client {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  client.fallbackNotificationHandler = async (notification) => void notifications.push(notification);
  return client;
}

/** `skillstate mcp ...args` on stdio, with the SDK client connected. */
export async function overStdio(args: string[], cwd?: string): Promise<Connected> {
  const notifications: Notification[] = [];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', ...args],
    env: process.env as Record<string, string>,
    stderr: 'pipe',
    ...(cwd ? { cwd } : {}),
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = newClient(notifications);
  await client.connect(transport);
  onCleanup(() => client.close());
  return { client, notifications, stderr: () => stderr, pid: transport.pid! };
}

/** Ends a child process (SIGTERM) and waits for it to exit. */
export function stopProcess(child: ChildProcess): Promise<unknown> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  return exited;
}

/** Starts `skillstate mcp --http <port> ...args` (by default a port the system chooses) and resolves with its URL once it listens. */
export async function httpServer(args: string[], cwd?: string, port = 0): Promise<{ url: string; child: ChildProcess; stderr(): string }> {
  const child = spawn(process.execPath, [BIN, 'mcp', '--http', String(port), ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  onCleanup(() => stopProcess(child));
  let stderr = '';
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL within 15 s; stderr: ${stderr}`)), 15_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /at (http:\/\/\S+)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before listening; stderr: ${stderr} stdout: ${stdout}`)));
  });
  return { url, child, stderr: () => stderr };
}

/** The SDK client connected over Streamable HTTP to `url`, once its stream of notifications is open; closed after the test. */
export async function httpClient(url: string, headers?: Record<string, string>): Promise<{ client: Client; notifications: Notification[] }> {
  const notifications: Notification[] = [];
  const client = newClient(notifications);
  // Notifications travel on the stream the client opens with a GET once the session starts: wait for it.
  let listening = false;
  const watched: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (init?.method === 'GET' && response.ok) listening = true;
    return response;
  };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: watched, ...(headers ? { requestInit: { headers } } : {}) }));
  onCleanup(() => client.close());
  await eventually(() => listening, 'the notification stream to open');
  return { client, notifications };
}

/** `skillstate mcp --http 0 ...args`, with the SDK client connected over Streamable HTTP. */
export async function overHttp(args: string[], cwd?: string, headers?: Record<string, string>): Promise<Connected> {
  const server = await httpServer(args, cwd);
  const { client, notifications } = await httpClient(server.url, headers);
  return { client, notifications, stderr: server.stderr, pid: server.child.pid! };
}

/** Waits until `check` holds, polling; fails with `what` after `ms`. */
export async function eventually(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The JSON-RPC error a request was answered with (fails the test when it was answered otherwise). */
export async function refusal(request: Promise<unknown>): Promise<McpError> {
  const error = await request.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}
