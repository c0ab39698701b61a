/** `restateAgents` options: what it refuses, with the culprit named, before anything is served. */
import { describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/index.js';
import { restateAgents } from '../../src/restate/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { Chatter, NotesAgent } from './agents.js';

describe('restateAgents options', () => {
  it('serves each definition, the directory, the deferred-answer workflow and the turn object', () => {
    const names = restateAgents({ definitions: [NotesAgent, Chatter], models: { default: scriptedModel([{ text: 'hi' }]) } }).map((service) => service.name);
    expect(names).toEqual(['notes_agent', 'chatter', 'skillstate_agents', 'skillstate_replies', 'skillstate_turns']);
  });

  it('refuses the host’s own service names and two definitions of one name', () => {
    expect(() => restateAgents({ definitions: [defineAgent({ name: 'skillstate_turns' })] })).toThrow("'skillstate_turns' is reserved for the host's own services");
    expect(() => restateAgents({ definitions: [NotesAgent, defineAgent({ name: 'notes_agent' })] })).toThrow("two definitions are named 'notes_agent'");
  });

  it('refuses an option it does not know, and resolvers without get(name), naming them', () => {
    expect(() => restateAgents({ definitions: [NotesAgent], resolver: [] } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_options', message: "restateAgents: unknown option 'resolver'; the options are definitions, skills, resolvers, models, compactors, telemetry" }),
    );
    expect(() => restateAgents({ definitions: [NotesAgent], resolvers: [{ get: () => undefined }, {} as never] })).toThrow('resolvers[1] has no get(name) method');
  });

  it('refuses models that are not AI SDK language models, and compactors that are not functions, naming them', () => {
    expect(() => restateAgents({ definitions: [Chatter], models: { default: 'gpt-4.1' as never } })).toThrow(expect.objectContaining({ code: 'invalid_options', message: expect.stringContaining('models.default is not an AI SDK language model') }));
    expect(() => restateAgents({ definitions: [Chatter], compactors: { brief: 'short' as never } })).toThrow(expect.objectContaining({ code: 'invalid_options', message: 'compactors.brief is not a function' }));
  });
});
