/**
 * A local Restate server for development and tests: the binary of `@restatedev/restate-server`
 * on free ports, bound to 127.0.0.1, with its data in a folder of your choice (a temporary one
 * by default), and the registration of a service deployment.
 *
 * Never binds beyond 127.0.0.1 and never deletes a data folder it did not create.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { arch, platform, tmpdir } from 'node:os';
import { join } from 'node:path';

/** A local Restate server started by `startRestateServer`. */
export interface LocalRestateServer {
  readonly ingressUrl: string;
  readonly adminUrl: string;
  readonly dataDir: string;
  /** Registers (or re-registers) the service deployment at `uri`. */
  register(uri: string): Promise<void>;
  /** Kills the server with SIGKILL and starts it again on the same ports and data folder. */
  restart(): Promise<void>;
  /** Stops the server; removes the data folder when it made it. */
  close(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (free when asked; taken by whoever binds it first). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function binaryPath(): string {
  const require = createRequire(import.meta.url);
  try {
    return require.resolve(`@restatedev/restate-server-${platform()}-${arch()}/bin/restate-server`);
  } catch {
    throw new Error(`no Restate server binary for ${platform()}-${arch()}: install the dev dependency @restatedev/restate-server (its platform package comes with it)`);
  }
}

async function waitFor(url: string, child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the Restate server exited with ${child.exitCode}:\n${output()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the Restate server did not answer ${url} within ${timeoutMs} ms:\n${output()}`);
}

/** Options of `startRestateServer`. */
export interface RestateServerOptions {
  /** Keeps the server's data here (default: a new temporary folder, removed on `close`). */
  dataDir?: string;
  /** How long to wait for the server to answer its health checks (default 30 s). */
  timeoutMs?: number;
  /**
   * Ports of 127.0.0.1 to try first (default: free ones). When one is taken, the server starts on
   * free ports instead (up to three tries); `ingressUrl` and `adminUrl` say where it listens.
   */
  ports?: { ingress: number; admin: number; node: number };
}

/** Starts a Restate server on free ports of 127.0.0.1; `dataDir` keeps its data (default: a new temporary folder). */
export async function startRestateServer(options: RestateServerOptions = {}): Promise<LocalRestateServer> {
  const madeDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'skillstate-restate-')));
  let [ingress, admin, node] = options.ports ? [options.ports.ingress, options.ports.admin, options.ports.node] : [await freePort(), await freePort(), await freePort()];
  const binary = binaryPath();
  let child: ChildProcess;
  let log = '';
  const start = async () => {
    log = '';
    child = spawn(binary, ['--no-logo', '--base-dir', dataDir, '--node-name', 'skillstate'], {
      env: {
        ...process.env,
        RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
        RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
        RESTATE_BIND_ADDRESS: `127.0.0.1:${node}`,
        RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${node}`,
        RESTATE_LISTEN_MODE: 'tcp',
        RESTATE_DEFAULT_NUM_PARTITIONS: '4',
        RESTATE_DISABLE_TELEMETRY: 'true',
        RESTATE_LOG_FILTER: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-8000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    await waitFor(`http://127.0.0.1:${admin}/health`, child, () => log, options.timeoutMs ?? 30_000);
    await waitFor(`http://127.0.0.1:${ingress}/restate/health`, child, () => log, options.timeoutMs ?? 30_000);
  };
  const kill = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  };
  // A port found free may be taken by another process before the server binds it: the first
  // start tries other ports then (later restarts keep the ports clients already know).
  for (let attempt = 1; ; attempt++) {
    try {
      await start();
      break;
    } catch (error) {
      await kill('SIGKILL');
      if (attempt >= 3 || !/address already in use|addrinuse|os error 98/i.test(log)) {
        if (madeDir) await rm(dataDir, { recursive: true, force: true });
        throw error;
      }
      [ingress, admin, node] = [await freePort(), await freePort(), await freePort()];
    }
  }
  const adminUrl = `http://127.0.0.1:${admin}`;
  return {
    ingressUrl: `http://127.0.0.1:${ingress}`,
    adminUrl,
    dataDir,
    async register(uri) {
      const response = await fetch(`${adminUrl}/deployments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ uri, force: true }) });
      if (!response.ok) throw new Error(`registering ${uri} with Restate failed (${response.status}): ${await response.text()}`);
    },
    async restart() {
      await kill('SIGKILL');
      await start();
    },
    async close() {
      await kill('SIGTERM');
      if (madeDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
