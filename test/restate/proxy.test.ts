/**
 * Several service processes behind a proxy, registered as one deployment: killing one with
 * SIGKILL does not stop calls from succeeding, and nothing is applied twice.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSignal } from '../../src/index.js';
import { connectRestate } from '../../src/restate/index.js';
import { startRestateServer, type LocalRestateServer } from '../../src/restate/server.js';
import { startProxy, startService, type ServiceProcess } from './harness.js';

let server: LocalRestateServer;
let services: ServiceProcess[];
let proxy: Awaited<ReturnType<typeof startProxy>>;

beforeAll(async () => {
  server = await startRestateServer();
  services = await Promise.all([startService(), startService()]);
  proxy = await startProxy(services.map((service) => service.port));
  await server.register(proxy.uri);
}, 60_000);

afterAll(async () => {
  for (const service of services ?? []) await service.kill();
  await proxy?.close();
  await server?.close();
});

it('two service processes behind a proxy: one killed, calls keep succeeding and none is applied twice', async () => {
  const client = connectRestate(server.ingressUrl);
  const agents = await Promise.all(['a', 'b', 'c', 'd'].map((id) => client.spawn('notes_agent', { id })));
  const round = (n: number) => Promise.all(agents.map((agent) => agent.call(createSignal('notes.add', { item: `r${n}` }))));
  await round(0);
  await services[0]!.kill();
  for (let n = 1; n <= 3; n++) await round(n);
  for (const agent of agents) expect(((await agent.getSnapshot()).state as { notebook: { items: string[] } }).notebook.items).toEqual(['r0', 'r1', 'r2', 'r3']);
}, 45_000);
