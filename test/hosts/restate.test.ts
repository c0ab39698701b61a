/** The host-agnostic behaviour cases against the Restate host (a real server and service process). */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createSignal } from '../../src/index.js';
import { connectRestate } from '../../src/restate/index.js';
import { startHost } from '../restate/harness.js';
import { HOST_CASES, type Host } from './cases.js';

let running: Awaited<ReturnType<typeof startHost>>;
let host: Host;

beforeAll(async () => {
  running = await startHost();
  const client = connectRestate(running.server.ingressUrl);
  host = {
    name: 'restate',
    async spawn(definition, { id, state }) {
      const agent = await client.spawn(definition, { id, ...(state ? { state } : {}) });
      return {
        send: (type, data) => agent.send(createSignal(type, data)),
        call: (type, data, id) => agent.call(createSignal(type, data, id !== undefined ? { id } : {})),
        run: (action, skill, params) => agent.run({ action, skill, params }),
        mount: (skill) => agent.mount(skill),
        unmount: (skill) => agent.unmount(skill),
        state: async () => (await agent.getSnapshot()).state,
        followTools: (watcher) => agent.subscribe(watcher),
      };
    },
    exists: (id) =>
      client
        .get(id)
        .getSnapshot()
        .then(
          () => true,
          (error: { code?: string }) => {
            if (error.code === 'unknown_agent') return false;
            throw error;
          },
        ),
  };
}, 60_000);

afterAll(async () => {
  await running?.close();
});

describe('Restate host', () => {
  it.each(HOST_CASES.map(([name, body], index) => [name, body, `case-${index}`] as const))('%s', (_name, body, id) => body(host, id));
});
