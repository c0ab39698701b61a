/** `startRestateServer`: a real Restate server on 127.0.0.1, started even when a port it was given is taken. */
import { createServer, type Server } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startRestateServer, type LocalRestateServer } from '../../src/restate/server.js';

let blocker: Server | undefined;
let server: LocalRestateServer | undefined;
afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => (blocker ? blocker.close(resolve) : resolve(undefined)));
});

describe('startRestateServer', () => {
  it('starts on other free ports when a port it was to use is taken, and says where it listens', async () => {
    const taken = await freePort();
    blocker = createServer();
    await new Promise<void>((resolve) => blocker!.listen(taken, '127.0.0.1', () => resolve()));
    const [admin, node] = [await freePort(), await freePort()];
    server = await startRestateServer({ ports: { ingress: taken, admin, node } });
    expect(server.ingressUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.ingressUrl).not.toBe(`http://127.0.0.1:${taken}`);
    expect((await fetch(`${server.ingressUrl}/restate/health`)).ok).toBe(true);
    expect((await fetch(`${server.adminUrl}/health`)).ok).toBe(true);
  }, 60_000);
});
