/**
 * Effects: a closed vocabulary of plain objects, each with `type` and `meta: { skill?, tags? }`.
 * Constructors build them; guards recognise each kind and refuse the others and malformed ones;
 * every effect survives JSON.
 */
import { describe, expect, it } from 'vitest';
import { createSignal, Effects, type Effect, type EffectType } from '../../src/index.js';
import { EFFECT_TYPES, effectProblem, errorEffect, failureEffect, isEffect } from '../../src/core/effects.js';
import { errorInfo } from '../../src/core/errors.js';
import { viaJson } from './support.js';

const signal = createSignal('job.done', { id: 1 }, { id: 'sig-1', time: '2025-01-01T00:00:00.000Z' });
const failure = errorInfo('action_failed', 'it broke', { action: 'add' });

describe('constructors', () => {
  it.each<[string, Effect, Record<string, unknown>]>([
    ['registerAction', Effects.registerAction('add', { skill: 'arithmetic', tags: ['skill'] }), { type: 'register_action', action: 'add', meta: { skill: 'arithmetic', tags: ['skill'] } }],
    ['deregisterAction', Effects.deregisterAction('add'), { type: 'deregister_action', action: 'add', meta: {} }],
    ['run', Effects.run('add', { a: 1, b: 2 }, { skill: 'arithmetic' }), { type: 'run', action: 'add', params: { a: 1, b: 2 }, meta: { skill: 'arithmetic' } }],
    ['run without params', Effects.run('get_count'), { type: 'run', action: 'get_count', params: {}, meta: {} }],
    ['reply', Effects.reply({ count: 3 }), { type: 'reply', data: { count: 3 }, meta: {} }],
    ['emit', Effects.emit(signal), { type: 'emit', signal, meta: {} }],
    ['spawn', Effects.spawn('worker', { id: 'w1', state: { n: 1 } }), { type: 'spawn', definition: 'worker', id: 'w1', state: { n: 1 }, meta: {} }],
    ['spawn without options', Effects.spawn('worker'), { type: 'spawn', definition: 'worker', meta: {} }],
    ['stop', Effects.stop({ agent: 'w1', reason: 'done' }), { type: 'stop', agent: 'w1', reason: 'done', meta: {} }],
    ['stop self', Effects.stop(), { type: 'stop', meta: {} }],
    ['schedule', Effects.schedule(1000, signal), { type: 'schedule', delay: 1000, signal, meta: {} }],
    ['error', Effects.error(failure, { skill: 'arithmetic' }), { type: 'error', error: failure, meta: { skill: 'arithmetic' } }],
  ])('%s builds the documented plain object', (_label, effect, expected) => {
    expect(effect).toEqual(expected);
    expect(Object.getPrototypeOf(effect)).toBe(Object.prototype);
    expect(isEffect(effect)).toBe(true);
  });

  it('copies the meta it is given, so later changes to it do not leak in', () => {
    const meta = { skill: 's', tags: ['a'] };
    const effect = Effects.reply(1, meta);
    meta.skill = 'changed';
    expect(effect.meta.skill).toBe('s');
  });

  it('lists the effect kinds in a fixed order', () => {
    expect(EFFECT_TYPES).toEqual(['register_action', 'deregister_action', 'run', 'reply', 'defer_reply', 'emit', 'spawn', 'stop', 'schedule', 'error']);
  });
});

const SAMPLES: Record<EffectType, Effect> = {
  register_action: Effects.registerAction('a'),
  deregister_action: Effects.deregisterAction('a'),
  run: Effects.run('a', { x: 1 }),
  reply: Effects.reply(null),
  defer_reply: Effects.deferReply(),
  emit: Effects.emit(signal),
  spawn: Effects.spawn('d'),
  stop: Effects.stop(),
  schedule: Effects.schedule(0, signal),
  error: Effects.error(failure),
};

const GUARDS: Record<EffectType, (value: unknown) => boolean> = {
  register_action: Effects.isRegisterAction,
  deregister_action: Effects.isDeregisterAction,
  run: Effects.isRun,
  reply: Effects.isReply,
  defer_reply: Effects.isDeferReply,
  emit: Effects.isEmit,
  spawn: Effects.isSpawn,
  stop: Effects.isStop,
  schedule: Effects.isSchedule,
  error: Effects.isError,
};

/** Malformed effects of each kind, with the problem `effectProblem` reports. */
const MALFORMED: [EffectType, unknown, string][] = [
  ['register_action', { type: 'register_action', meta: {} }, "effect 'register_action' needs an action name"],
  ['deregister_action', { type: 'deregister_action', action: 5, meta: {} }, "effect 'deregister_action' needs an action name"],
  ['run', { type: 'run', params: {}, meta: {} }, "effect 'run' needs an action name"],
  ['reply', { type: 'reply', data: 1, to: 5, meta: {} }, "effect 'reply' has a 'to' that is not a signal id"],
  ['reply', { type: 'reply', data: 1, error: { code: 'x', message: 'y' }, meta: {} }, "effect 'reply' carries an error but no 'to': a step's own caller gets its error from the step"],
  ['reply', { type: 'reply', data: 1, to: 's1', error: { code: 'x' }, meta: {} }, "effect 'reply' has an error without a code and a message"],
  ['run', { type: 'run', action: 'add', params: [1, 2], meta: {} }, "effect 'run' of 'add' has params that are not an object"],
  ['emit', { type: 'emit', signal: { type: 'a..b' }, meta: {} }, "effect 'emit' carries an invalid signal: signal type 'a..b' has an empty segment"],
  ['emit', { type: 'emit', meta: {} }, "effect 'emit' carries an invalid signal: a signal must be an object"],
  ['spawn', { type: 'spawn', definition: '', meta: {} }, "effect 'spawn' needs the name of an agent definition"],
  ['stop', { type: 'stop', agent: 7, meta: {} }, "effect 'stop' has an agent id that is not a string"],
  ['schedule', { type: 'schedule', delay: -1, signal, meta: {} }, "effect 'schedule' needs a delay in milliseconds (a finite number >= 0), got -1"],
  ['schedule', { type: 'schedule', delay: Number.NaN, signal, meta: {} }, "effect 'schedule' needs a delay in milliseconds (a finite number >= 0), got NaN"],
  ['schedule', { type: 'schedule', delay: Number.POSITIVE_INFINITY, signal, meta: {} }, "effect 'schedule' needs a delay in milliseconds (a finite number >= 0), got Infinity"],
  ['schedule', { type: 'schedule', delay: '10', signal, meta: {} }, "effect 'schedule' needs a delay in milliseconds (a finite number >= 0), got a string, '10'"],
  ['schedule', { type: 'schedule', delay: 10, signal: 'job.done', meta: {} }, "effect 'schedule' carries an invalid signal: a signal must be an object"],
  ['error', { type: 'error', error: { code: 'x' }, meta: {} }, "effect 'error' needs an error with a code and a message"],
  ['error', { type: 'error', error: 'boom', meta: {} }, "effect 'error' needs an error with a code and a message"],
  ['reply', { type: 'reply', data: 1, meta: 'skill' }, "effect 'reply' has a meta that is not an object"],
  ['reply', { type: 'reply', data: 1, meta: { skill: 5 } }, "effect 'reply' has a meta whose skill is not a string"],
  ['reply', { type: 'reply', data: 1, meta: { tags: 'skill' } }, "effect 'reply' has meta tags that are not an array of strings"],
  ['run', { type: 'run', action: 'add', meta: { tags: [1] } }, "effect 'run' has meta tags that are not an array of strings"],
];

describe('guards', () => {
  it.each(EFFECT_TYPES.map((type) => [type]))('the %s guard accepts its own kind and refuses every other kind', (type) => {
    for (const other of EFFECT_TYPES) expect(GUARDS[type](SAMPLES[other]), `${type} guard on ${other}`).toBe(other === type);
  });

  it.each(MALFORMED)('the %s guard refuses %j', (type, value, problem) => {
    expect(GUARDS[type](value)).toBe(false);
    expect(isEffect(value)).toBe(false);
    expect(effectProblem(value)).toBe(problem);
  });

  it.each([[null], [undefined], [5], ['run'], [[]], [new (class Fx { type = 'reply'; meta = {}; })()]])('every guard refuses a non-plain value (%j)', (value) => {
    for (const type of EFFECT_TYPES) expect(GUARDS[type](value)).toBe(false);
    expect(effectProblem(value)).toBe('an effect must be a plain object');
  });

  it('accepts an effect without meta (the core stamps one on)', () => {
    expect(Effects.isReply({ type: 'reply', data: 1 })).toBe(true);
  });
});

describe('effectProblem', () => {
  it('names the unknown type and lists the known ones', () => {
    expect(effectProblem({ type: 'teleport', meta: {} })).toBe(
      "unknown effect type 'teleport'; known types: register_action, deregister_action, run, reply, defer_reply, emit, spawn, stop, schedule, error",
    );
    expect(effectProblem({ meta: {} })).toBe(
      "unknown effect type 'undefined'; known types: register_action, deregister_action, run, reply, defer_reply, emit, spawn, stop, schedule, error",
    );
  });

  it('is undefined for every well-formed sample', () => {
    for (const effect of Object.values(SAMPLES)) expect(effectProblem(effect)).toBeUndefined();
  });
});

describe('plain data', () => {
  it.each(EFFECT_TYPES.map((type) => [type]))('a %s effect survives JSON and is still recognised', (type) => {
    const copy = viaJson(SAMPLES[type]);
    expect(copy).toEqual(SAMPLES[type]);
    expect(GUARDS[type](copy)).toBe(true);
  });
});

describe('errorEffect and failureEffect', () => {
  it('records the error and its skill in meta', () => {
    const info = errorInfo('action_failed', 'nope', { skill: 'counter', action: 'increment' });
    expect(errorEffect(info)).toEqual({ type: 'error', error: info, meta: { skill: 'counter' } });
    expect(errorEffect(errorInfo('no_route', 'none'))).toEqual({ type: 'error', error: { code: 'no_route', message: 'none' }, meta: {} });
  });

  it('builds an error effect from a code and a message', () => {
    expect(failureEffect('timeout', 'too slow', { subject: 'a.b' })).toEqual({
      type: 'error',
      error: { code: 'timeout', message: 'too slow', subject: 'a.b' },
      meta: {},
    });
  });
});
