/** The host-agnostic behaviour cases against the in-process system, in memory and durable on SQLite in 'step' durability. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { createAgentSystem, createSignal, createSqliteStore, type AgentSystem, type AgentSystemOptions } from '../../src/index.js';
import { compactors, definitions, models, resolvers, skills } from '../restate/agents.js';
import { HOST_CASES, type Host } from './cases.js';

const durableDir = mkdtempSync(join(tmpdir(), 'skillstate-host-cases-'));
const options: AgentSystemOptions = { definitions, skills, resolvers, models, compactors, onUnhandledError: () => {}, onUnhandledDiagnostic: () => {} };
const systems = { 'in-process': createAgentSystem(options), 'in-process, durable on SQLite': createAgentSystem({ ...options, store: createSqliteStore({ path: join(durableDir, 'agents.db') }), durability: 'step' }) };
afterAll(async () => {
  for (const system of Object.values(systems)) await system.shutdown();
  rmSync(durableDir, { recursive: true, force: true });
});

function hostOf(system: AgentSystem): Host {
  return {
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
}

for (const [name, system] of Object.entries(systems)) {
  describe(`${name} host`, () => {
    const host = hostOf(system);
    it.each(HOST_CASES.map(([caseName, body], index) => [caseName, body, `case-${index}`] as const))('%s', (_name, body, id) => body(host, id));
  });
}
