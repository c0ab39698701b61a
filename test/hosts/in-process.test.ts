/** The host-agnostic behaviour cases against the in-process system. */
import { afterAll, describe, it } from 'vitest';
import { createAgentSystem, createSignal } from '../../src/index.js';
import { compactors, definitions, models, resolvers, skills } from '../restate/agents.js';
import { HOST_CASES, type Host } from './cases.js';

const system = createAgentSystem({ definitions, skills, resolvers, models, compactors, onUnhandledError: () => {}, onUnhandledDiagnostic: () => {} });
afterAll(() => system.shutdown());

const host: Host = {
  name: 'in-process',
  async spawn(name, { id, state }) {
    const definition = definitions.find((candidate) => candidate.name === name)!;
    const agent = system.spawn(definition, { id, ...(state ? { state: state as never } : {}) });
    return {
      send: async (type, data) => agent.send(createSignal(type, data)),
      call: (type, data, id) => agent.call(createSignal(type, data, id !== undefined ? { id } : {})),
      run: (action, skill, params) => agent.run({ action, skill, params }),
      mount: async (skill) => void (await agent.mount(skill)),
      unmount: async (skill) => void (await agent.unmount(skill)),
      state: async () => agent.getSnapshot().state as Record<string, unknown>,
      // Published signals reach every agent whose routes match them: the watcher hears them already.
      followTools: async () => {},
    };
  },
  exists: async (id) => system.get(id) !== undefined,
};

describe('in-process host', () => {
  it.each(HOST_CASES.map(([name, body], index) => [name, body, `case-${index}`] as const))('%s', (_name, body, id) => body(host, id));
});
