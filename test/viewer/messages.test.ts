/**
 * Live values as the inspection stream carries them: an error keeps what a person needs to read
 * it (its name, message and code), not the `{}` its enumerable fields alone would give.
 */
import { describe, expect, it } from 'vitest';
import { RuntimeError } from '../../src/core/runtime-error.js';
import { errorInfo } from '../../src/core/errors.js';
import { toPlain } from '../../src/viewer/messages.js';

describe('toPlain', () => {
  it('keeps a thrown Error its name and message, and its own fields', () => {
    const error = Object.assign(new TypeError('the disk is full'), { errno: 28 });
    expect(toPlain({ type: 'xstate.promise.reject', data: error })).toEqual({ type: 'xstate.promise.reject', data: { name: 'TypeError', message: 'the disk is full', errno: 28 } });
  });

  it("keeps a project error's code and message", () => {
    const plain = toPlain(new RuntimeError(errorInfo('action_failed', "action 'divide' failed: cannot divide by zero"))) as Record<string, unknown>;
    expect(plain).toMatchObject({ code: 'action_failed', message: "action 'divide' failed: cannot divide by zero" });
  });
});
