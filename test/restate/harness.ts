/**
 * A real Restate server and a real service process for the Restate host tests, both started on
 * free ports of 127.0.0.1; the service process can be killed with SIGKILL and started again on
 * its port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startRestateServer, type LocalRestateServer } from '../../src/restate/server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** A service process serving test/restate/agents.ts. */
export interface ServiceProcess {
  readonly uri: string;
  readonly port: number;
  /** SIGKILL, then wait for it to be gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  /** What the process has written so far (its log). */
  output(): string;
}

/**
 * A free port below the kernel's range for outgoing connections. The service process is killed
 * and started again on its port; a port from that range (what listening on port 0 gives) can be
 * taken meanwhile as the local end of any connection the other tests open, and the new process
 * then cannot listen.
 */
async function stablePort(): Promise<number> {
  const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  const top = Math.min(low ?? 32768, 32768) - 1;
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * (top - 10_000));
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

export async function startService(env: Record<string, string> = {}): Promise<ServiceProcess> {
  const port = await stablePort();
  let child: ChildProcess | undefined;
  let output = '';
  const start = async () => {
    // Started when this process says it listens, not an earlier one (the log holds every start).
    const from = output.length;
    child = spawn(process.execPath, ['--conditions=skillstate-source', '--import', 'tsx', 'test/restate/service.ts', String(port)], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      child!.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.slice(from).includes('listening')) resolve();
      });
      child!.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child!.once('exit', (code) => reject(new Error(`service process exited with ${code}:\n${output}`)));
    });
  };
  await start();
  return {
    uri: `http://127.0.0.1:${port}`,
    port,
    async kill() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGKILL');
      await gone;
    },
    start,
    output: () => output,
  };
}

/** A Restate server and a service process registered with it; `env` is added to the service process's environment. */
export async function startHost(env: Record<string, string> = {}): Promise<{ server: LocalRestateServer; service: ServiceProcess; close(): Promise<void> }> {
  const server = await startRestateServer();
  const service = await startService(env);
  await server.register(service.uri);
  return {
    server,
    service,
    async close() {
      await service.kill();
      await server.close();
    },
  };
}

/** Polls `probe` until it returns true (real time), or fails naming what it waited for. */
export async function eventually(what: string, probe: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/**
 * A TCP proxy on a free port of 127.0.0.1 in front of several service processes: each incoming
 * connection goes to the first backend (in turn) that accepts it, so a killed backend's share
 * moves to the others when Restate reconnects.
 */
export async function startProxy(backends: readonly number[]): Promise<{ uri: string; close(): Promise<void> }> {
  const { createServer, connect } = await import('node:net');
  let next = 0;
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((incoming) => {
    sockets.add(incoming);
    incoming.once('close', () => sockets.delete(incoming));
    const attempt = (tries: number) => {
      const port = backends[next++ % backends.length]!;
      const outgoing = connect(port, '127.0.0.1');
      outgoing.once('connect', () => {
        sockets.add(outgoing);
        outgoing.once('close', () => sockets.delete(outgoing));
        incoming.pipe(outgoing).pipe(incoming);
        outgoing.on('error', () => incoming.destroy());
        incoming.on('error', () => outgoing.destroy());
      });
      outgoing.once('error', () => (tries > 1 ? attempt(tries - 1) : incoming.destroy()));
    };
    attempt(backends.length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    uri: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
