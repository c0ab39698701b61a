/**
 * `skillstate mcp --agent ...` once its agent has stopped (an action of it returns a `stop`
 * effect): the command's system is its own, so nothing will run the agent again. It answers the
 * request under way, says on stderr that the agent stopped and why it exits, and exits with 1, on
 * stdio as on Streamable HTTP. The command runs as a real subprocess.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BIN, httpClient, httpServer, onCleanup, ONLY, stopProcess } from '../mcp/processes.js';

const STOPPABLE = `${fileURLToPath(new URL('../mcp/fixtures/stoppable-agent.ts', import.meta.url))}:Stoppable`;
const MESSAGE = "skillstate mcp: agent 'stoppable' has stopped, and nothing in this server can start it again: the server exits, having answered the requests under way (start the command again to serve a new one)";

/** Resolves with a child's exit code. */
function exitOf(child: ReturnType<typeof spawn>): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('skillstate mcp --agent, once the agent has stopped', { timeout: 90_000 }, () => {
  it('on stdio: answers the call that stopped it, says so on stderr and exits with 1', async () => {
    const child = spawn(process.execPath, [BIN, 'mcp', ...ONLY, '--agent', STOPPABLE], { stdio: ['pipe', 'pipe', 'pipe'] });
    onCleanup(() => stopProcess(child));
    const exited = exitOf(child);
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    /** Each JSON-RPC answer read from stdout, by id; resolved as it arrives. */
    const answers = new Map<number, (message: unknown) => void>();
    let pending = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
        const message = JSON.parse(pending.slice(0, end)) as { id?: number };
        pending = pending.slice(end + 1);
        if (message.id !== undefined) answers.get(message.id)?.(message);
      }
    });
    const request = (id: number, method: string, params: unknown) => {
      const answer = new Promise((resolve) => answers.set(id, resolve));
      child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      return answer;
    };
    await request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } });
    child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    // stdin stays open: the command exits because its agent stopped, not because its input ended.
    expect(await request(2, 'tools/call', { name: 'retire', arguments: {} })).toMatchObject({ id: 2, result: { content: [{ type: 'text', text: 'retiring' }] } });
    expect(await exited).toBe(1);
    expect(stderr).toContain(MESSAGE);
    expect(stderr).not.toContain('answers every request with agent_stopped');
  });

  it('over HTTP: answers the call that stopped it, says so on stderr and exits with 1', async () => {
    const server = await httpServer([...ONLY, '--agent', STOPPABLE]);
    const exited = exitOf(server.child);
    const { client } = await httpClient(server.url);
    expect((await client.callTool({ name: 'retire', arguments: {} })).content).toEqual([{ type: 'text', text: 'retiring' }]);
    expect(await exited).toBe(1);
    expect(server.stderr()).toContain(MESSAGE);
  });
});
