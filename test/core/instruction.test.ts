/**
 * Instructions: what `cmd` runs. Normalisation never throws and explains a malformed
 * instruction; a route target and the signal it matched become instructions.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSignal, defineAction } from '../../src/index.js';
import { instructionsForTarget, normalizeInstruction } from '../../src/core/instruction.js';

const ping = defineAction({ name: 'ping', description: 'Ping', input: z.object({}), run: () => 'pong' });

describe('normalizeInstruction', () => {
  it.each<[string, unknown, Record<string, unknown>]>([
    ['an action name', 'ping', { action: 'ping', actionSpec: undefined, params: {}, skill: undefined }],
    ['an action object', ping, { action: 'ping', actionSpec: ping, params: {}, skill: undefined }],
    ['{ action, params, skill }', { action: 'ping', params: { a: 1 }, skill: 'net' }, { action: 'ping', actionSpec: undefined, params: { a: 1 }, skill: 'net' }],
    ['{ action: an action object }', { action: ping }, { action: 'ping', actionSpec: ping, params: {}, skill: undefined }],
  ])('normalises %s', (_label, value, expected) => {
    expect(normalizeInstruction(value)).toEqual({ ok: true, value: expected });
  });

  it.each<[unknown, string]>([
    [null, 'an instruction must be an action name, an action or { action, params }; got null'],
    [7, 'an instruction must be an action name, an action or { action, params }; got number'],
    [['ping'], 'an instruction must be an action name, an action or { action, params }; got an array'],
    [{ params: {} }, "instruction has no action: 'action' must be an action name or an action, got undefined"],
    [{ action: { name: 'ping' } }, "instruction has no action: 'action' must be an action name or an action, got an object"],
    [{ action: 'ping', params: 'a=1' }, "instruction for 'ping' has params that are not an object (got string)"],
    [{ action: 'ping', params: null }, "instruction for 'ping' has params that are not an object (got null)"],
    [{ action: 'ping', skill: ['net'] }, "instruction for 'ping' names a skill that is not a string"],
  ])('explains why %j is malformed (invalid_instruction)', (value, message) => {
    const normalized = normalizeInstruction(value);
    expect(normalized.ok).toBe(false);
    expect(!normalized.ok && normalized.error.code).toBe('invalid_instruction');
    expect(!normalized.ok && normalized.error.message).toBe(message);
  });
});

describe('instructionsForTarget', () => {
  const signal = createSignal('order.placed', { total: 5, currency: 'EUR' });

  it('an action target takes its params from the signal data, with the static params on top', () => {
    expect(instructionsForTarget({ action: 'charge', params: { currency: 'USD' }, skill: 'billing' }, signal)).toEqual({
      ok: true,
      instructions: [{ action: 'charge', params: { total: 5, currency: 'USD' }, skill: 'billing' }],
    });
  });

  it('uses empty params when the signal data is not an object', () => {
    expect(instructionsForTarget({ action: 'charge' }, createSignal('a', 'text'))).toEqual({ ok: true, instructions: [{ action: 'charge', params: {} }] });
  });

  it('a handler target returns one instruction or several', () => {
    expect(instructionsForTarget(() => 'ping', signal)).toEqual({ ok: true, instructions: ['ping'] });
    expect(instructionsForTarget((s) => [{ action: 'log', params: { type: s.type } }, ping], signal)).toEqual({
      ok: true,
      instructions: [{ action: 'log', params: { type: 'order.placed' } }, ping],
    });
  });

  it('a handler that throws yields signal_failed naming the signal type', () => {
    expect(instructionsForTarget(() => { throw new Error('handler broke'); }, signal)).toEqual({
      ok: false,
      error: { code: 'signal_failed', message: "route handler for 'order.placed' threw: handler broke", subject: 'order.placed' },
    });
  });

  it.each([[undefined], [5], [[null]], [{ params: {} }]])('a handler returning something that is not an instruction (%j) yields invalid_instruction', (produced) => {
    const outcome = instructionsForTarget(() => produced as never, signal);
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.error).toMatchObject({ code: 'invalid_instruction', subject: 'order.placed' });
    expect(!outcome.ok && outcome.error.message).toContain("route handler for 'order.placed' returned");
  });
});
