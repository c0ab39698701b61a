/**
 * The abort signal the model steps of a turn share: each step gets the whole time-out from the
 * moment it starts, a pause between steps never fires, and a parent's abort reaches the work.
 * The clock is vitest's: the time-out is the thing under test, so no test waits for it.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StepAbort } from '../../src/model/step-abort.js';

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('the abort signal of model steps', () => {
  it('gives each step restarted on it the whole time-out, however long the steps before took', () => {
    const request = new StepAbort(100);
    // Three steps of 80 ms one after another: 240 ms in all, each within its 100.
    for (let step = 0; step < 3; step++) {
      if (step > 0) request.restart();
      vi.advanceTimersByTime(80);
      expect(request.signal.aborted).toBe(false);
      request.pause();
    }
    request.restart();
    vi.advanceTimersByTime(99);
    expect(request.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(request.signal.aborted).toBe(true);
    expect(request.timedOut).toBe(true);
    expect((request.signal.reason as Error).message).toBe('no answer within 100 ms');
  });

  it('never fires while paused, and fires a whole time-out after the next restart', () => {
    const request = new StepAbort(100);
    vi.advanceTimersByTime(50);
    request.pause();
    vi.advanceTimersByTime(1_000);
    expect(request.signal.aborted).toBe(false);
    request.restart();
    vi.advanceTimersByTime(99);
    expect(request.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(request.timedOut).toBe(true);
  });

  it('leaves no timer behind once released, and is aborted by its parent with the parent’s reason', () => {
    const released = new StepAbort(100);
    released.release();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(1_000);
    expect(released.signal.aborted).toBe(false);

    const parent = new AbortController();
    const request = new StepAbort(100, parent.signal);
    parent.abort(new Error('the turn was cancelled'));
    expect(request.signal.aborted).toBe(true);
    expect(request.timedOut).toBe(false);
    expect((request.signal.reason as Error).message).toBe('the turn was cancelled');
    expect(vi.getTimerCount()).toBe(0);
  });
});
