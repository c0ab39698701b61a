/**
 * A route whose target action does not exist is refused when the agent is defined, naming the
 * route and the action; a route that names its skill waits for that skill to be mounted later.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgentSystem, createSignal, defineAction, defineAgent, defineSkill, DefinitionError, type AgentSystem } from '../../src/index.js';
import { arithmetic, calculator, counter } from '../../skills/index.js';
import { thrownBy } from './support.js';

const shout = defineAction({ name: 'shout', description: 'Shouts', input: z.object({ word: z.string() }), run: ({ word }) => word.toUpperCase() });
const megaphone = defineSkill({ name: 'megaphone', actions: [shout] });

let system: AgentSystem | undefined;
afterEach(async () => {
  await system?.shutdown();
  system = undefined;
});

describe('a route whose target action does not exist is refused at defineAgent', () => {
  it('an agent route to an action nobody has → unknown_action naming the route and the action', () => {
    const error = thrownBy(
      () => defineAgent({ name: 'desk', skills: [counter], routes: [{ path: 'desk.shout', target: { action: 'shout' } }] }),
      DefinitionError,
      'unknown_action',
    );
    expect(error.subject).toBe('desk.shout');
    expect(error.action).toBe('shout');
    expect(error.skill).toBeUndefined();
    expect(error.details).toEqual({ route: 'desk.shout', available: ['increment', 'decrement', 'reset', 'get_count'] });
    expect(error.message).toBe(
      "agent 'desk': route 'desk.shout' targets action 'shout', but neither the agent's own actions nor its skills' have an action of that name " +
        "(actions: increment, decrement, reset, get_count); a route to an action of a skill mounted later names that skill: { action: 'shout', skill: '<skill>' }",
    );
  });

  it("a skill's route to an action no attached skill has → unknown_action naming the skill too", () => {
    const relay = defineSkill({ name: 'relay', routes: [{ path: 'relay.shout', target: { action: 'shout', params: { word: 'hi' } } }] });
    const error = thrownBy(() => defineAgent({ name: 'desk', skills: [relay] }), DefinitionError, 'unknown_action');
    expect(error).toMatchObject({ skill: 'relay', subject: 'relay.shout', action: 'shout' });
    expect(error.message).toContain("route 'relay.shout' of skill 'relay' targets action 'shout'");
  });

  it('a route naming an attached skill that lacks the action → unknown_action listing that skill’s actions', () => {
    const error = thrownBy(
      () => defineAgent({ name: 'desk', skills: [counter, megaphone], routes: [{ path: 'desk.shout', target: { action: 'shout', skill: 'counter' } }] }),
      DefinitionError,
      'unknown_action',
    );
    expect(error.message).toBe("agent 'desk': route 'desk.shout' targets action 'shout', but skill 'counter' does not have an action of that name (its actions: increment, decrement, reset, get_count)");
  });

  it('a route to an action object no attached skill provides → unknown_action, even when another action has its name', () => {
    const impostor = defineAction({ name: 'shout', description: 'Whispers', input: z.object({ word: z.string() }), run: ({ word }) => word });
    const error = thrownBy(
      () => defineAgent({ name: 'desk', skills: [megaphone], routes: [{ path: 'desk.shout', target: { action: impostor } }] }),
      DefinitionError,
      'unknown_action',
    );
    expect(error.message).toContain('have this action object');
  });

  it("accepts routes to the agent's own actions, its skills' actions (another skill's too) and handlers", async () => {
    const relay = defineSkill({ name: 'relay', routes: [{ path: 'relay.shout', target: { action: 'shout' } }] });
    const Desk = defineAgent({
      name: 'desk',
      skills: [megaphone, relay],
      actions: [defineAction({ name: 'ping', description: 'Pings', input: z.object({}), run: () => 'pong' })],
      routes: [
        { path: 'desk.ping', target: { action: 'ping' } },
        { path: 'desk.shout', target: { action: shout } },
        { path: 'desk.anything', target: () => ({ action: 'whatever' }) },
      ],
    });
    system = createAgentSystem();
    const agent = system.spawn(Desk);
    expect(await agent.call(createSignal('relay.shout', { word: 'hey' }))).toBe('HEY');
    expect(await agent.call(createSignal('desk.ping'))).toBe('pong');
    expect(await agent.call(createSignal('desk.shout', { word: 'ho' }))).toBe('HO');
  });
});

describe('a route to a skill mounted later names that skill', () => {
  it('is accepted at defineAgent, answers unknown_action until the skill is mounted, then runs its action', async () => {
    const Desk = defineAgent({
      name: 'desk',
      skills: [calculator],
      routes: [{ path: 'desk.multiply', target: { action: 'multiply', skill: 'arithmetic' } }],
    });
    system = createAgentSystem();
    const agent = system.spawn(Desk);
    await expect(agent.call(createSignal('desk.multiply', { a: 6, b: 7 }))).rejects.toMatchObject({
      code: 'unknown_action',
      message: expect.stringContaining("skill 'arithmetic' is not mounted"),
    });
    await agent.mount(arithmetic);
    expect(await agent.call(createSignal('desk.multiply', { a: 6, b: 7 }))).toEqual({ result: 42 });
  });
});
