/**
 * Serving agents on the Restate host from this process: an HTTP/2 endpoint (the protocol the
 * Restate server speaks to services) on a port of your choice, with a `close` to stop it.
 *
 * Registers nothing with a Restate server: see `LocalRestateServer.register` or Restate's CLI.
 */
import './polyfill.js';
import { createServer } from 'node:http2';
import * as restate from './sdk.js';
import { restateAgents, type RestateAgentsOptions } from './host.js';

/** A service endpoint started by `serveRestateAgents`. */
export interface RestateService {
  /** The port it listens on (the one asked for, or the one the system chose for 0). */
  readonly port: number;
  /** Where a Restate server reaches it, to register the deployment: `http://<host>:<port>`. */
  readonly uri: string;
  close(): Promise<void>;
}

/** Serves `restateAgents(options)` over HTTP/2 on `port` (default 9080; 0 picks a free one) and `host` (default 127.0.0.1). */
export async function serveRestateAgents(options: RestateAgentsOptions & { port?: number; host?: string }): Promise<RestateService> {
  const { port: _port, host: _host, ...served } = options;
  let endpoint = restate.endpoint();
  for (const service of restateAgents(served)) endpoint = endpoint.bind(service);
  const server = createServer(endpoint.http2Handler());
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 9080, host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 9080);
  const sessions = new Set<import('node:http2').ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  return {
    port,
    uri: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        // The Restate server keeps its HTTP/2 sessions open; close them or `close` never ends.
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  };
}
