/**
 * The inspection server's answer to requests naming a host that is not this machine: refused on
 * every loopback interface it may be bound to, so a page elsewhere cannot reach it by DNS rebinding.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startViewerServer, type ViewerServer } from '../../src/viewer/server.js';

const servers: ViewerServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

function status(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the inspection server on a loopback address', () => {
  it('refuses a non-loopback Host on 127.0.0.2 and ::ffff:127.0.0.1 too, and serves loopback names', async () => {
    for (const host of ['127.0.0.2', '::ffff:127.0.0.1']) {
      const server = await startViewerServer({ host, home: 'local' });
      servers.push(server);
      const url = `http://${host.includes(':') ? `[${host}]` : host}:${server.port}/local/`;
      expect(await status(url, `evil.example:${server.port}`)).toBe(403);
      expect(await status(url, `localhost:${server.port}`)).toBe(200);
    }
  });
});
