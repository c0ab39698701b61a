/**
 * The effect interpreter: one handler per effect kind, and the system actor names one action
 * per kind from the same list, so the inspector shows every effect as what it is.
 */
import { describe, expect, it } from 'vitest';
import { EFFECT_TYPES, Effects } from '../../src/core/effects.js';
import { createSignal } from '../../src/core/signal.js';
import { effectHandlers, interpretEffect, type EffectHost } from '../../src/runtime/effects.js';
import { systemMachine } from '../../machines/system.js';
import { createAgentSystem, defineAction, defineAgent, defineSkill, result } from '../../src/index.js';
import { z } from 'zod';

/** A host that records what the handlers asked of it. */
function recordingHost(running: readonly string[] = ['a1']): { host: EffectHost; calls: string[] } {
  const calls: string[] = [];
  const host: EffectHost = {
    registerAction: (agent, name, registered) => calls.push(`${registered ? 'register' : 'deregister'} ${agent} ${name}`),
    publish: (signal, from) => calls.push(`publish ${signal.type} from ${from}`),
    spawnChild: (parent, effect) => calls.push(`spawn ${effect.definition} under ${parent}`),
    isRunning: (agent) => running.includes(agent),
    close: (agent, reason) => calls.push(`close ${agent}: ${reason}`),
    stopAgent: (agent, reason) => calls.push(`stop ${agent}: ${reason}`),
    schedule: (agent, delay, signal) => calls.push(`schedule ${signal.type} for ${agent} in ${delay}`),
    report: (agent, error, answered) => calls.push(`report ${error.code} for ${agent}${answered ? ' (answered)' : ''}`),
    wasAnswered: (error) => error.message === 'received by its caller',
    afterStep: (work) => work(),
  };
  return { host, calls };
}

describe('effect interpreter', () => {
  it('has a handler for every effect kind, and the system actor an action for each', () => {
    expect(Object.keys(effectHandlers(recordingHost().host)).sort()).toEqual([...EFFECT_TYPES].sort());
    expect(Object.keys(systemMachine.implementations.actions).sort()).toEqual([...EFFECT_TYPES].sort());
  });

  it('carries out each kind on the host, naming skill actions skill/action', () => {
    const { host, calls } = recordingHost(['a1', 'a2']);
    const handlers = effectHandlers(host);
    const origin = { agent: 'a1', answered: false };
    for (const effect of [
      Effects.registerAction('add', { skill: 'math' }),
      Effects.deregisterAction('own'),
      Effects.emit(createSignal('done')),
      Effects.spawn('worker'),
      Effects.stop({ agent: 'a2', reason: 'enough' }),
      Effects.stop(),
      Effects.schedule(10, createSignal('later')),
      Effects.reply('ignored here'),
      Effects.run('noop'),
    ]) {
      interpretEffect(handlers, effect, origin);
    }
    interpretEffect(handlers, Effects.stop({ agent: 'ghost' }), origin);
    interpretEffect(handlers, Effects.error({ code: 'action_failed', message: 'received by its caller' }), { agent: 'a1', answered: true });
    // A step's other errors are reported even when its caller was answered.
    interpretEffect(handlers, Effects.error({ code: 'invalid_effect', message: 'another' }), { agent: 'a1', answered: true });
    expect(calls).toEqual([
      'register a1 math/add',
      'deregister a1 own',
      'publish done from a1',
      'spawn worker under a1',
      'stop a2: enough',
      "close a1: stopped by agent 'a1'",
      "stop a1: stopped by agent 'a1'",
      'schedule later for a1 in 10',
      'report unknown_agent for a1',
      'report action_failed for a1 (answered)',
      'report invalid_effect for a1',
    ]);
  });
});

describe('the system actor', () => {
  it('takes each effect of a step as an event named after its kind, in order, and carries it out with the action of that name', async () => {
    const seen: string[] = [];
    // The inspector hears the system actor start before createAgentSystem returns.
    let systemActor: unknown;
    const system = createAgentSystem({
      onUnhandledError: () => {},
      onUnhandledDiagnostic: () => {},
      inspect: (event) => {
        if (systemActor === undefined || event.actorRef !== systemActor) return;
        if (event.type === '@xstate.event') seen.push(`event ${(event.event as { type: string }).type}`);
        if (event.type === '@xstate.action') seen.push(`action ${event.action.type}`);
      },
    });
    systemActor = system.actor;
    const heard: string[] = [];
    system.subscribe('told.*', (signal) => heard.push(signal.type));
    const teller = defineSkill({
      name: 'teller',
      actions: [
        defineAction({
          name: 'tell',
          description: 'Emits two signals and schedules a third',
          input: z.object({}),
          run: () => result('told', { effects: [Effects.emit(createSignal('told.first')), Effects.schedule(60_000, createSignal('told.later')), Effects.emit(createSignal('told.second'))] }),
        }),
      ],
      routes: [{ path: 'tell', target: { action: 'tell' } }],
    });
    const agent = system.spawn(defineAgent({ name: 'telling', skills: [teller] }), { id: 'teller' });
    await expect(agent.call(createSignal('tell'))).resolves.toBe('told');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(seen.filter((line) => !line.startsWith('event xstate.'))).toEqual(['event emit', 'action emit', 'event schedule', 'action schedule', 'event emit', 'action emit']);
    expect(heard).toEqual(['told.first', 'told.second']);
    await system.shutdown();
  });
});
