/**
 * Timers for delays of any length. Node's `setTimeout` fires after 1 ms when asked for more than
 * 2^31 − 1 ms (about 24.8 days) — a scheduled signal or a call timeout of a month would go off
 * at once. Longer delays are chained: a timer re-arms itself, against a fixed deadline, until the
 * deadline is reached. Ordinary delays stay plain `setTimeout` handles: no object, no closure more.
 */

/** The longest delay `setTimeout` honours. */
export const MAX_TIMER_DELAY = 2_147_483_647;

/** A delay longer than `setTimeout` takes, as a chain of timers towards one deadline. */
class ChainedTimer {
  private handle: ReturnType<typeof setTimeout>;
  private readonly deadline: number;

  constructor(
    private readonly callback: () => void,
    delay: number,
  ) {
    this.deadline = Date.now() + delay;
    this.handle = setTimeout(() => this.wake(), MAX_TIMER_DELAY);
  }

  private wake(): void {
    const left = this.deadline - Date.now();
    if (left > 0) this.handle = setTimeout(() => this.wake(), Math.min(left, MAX_TIMER_DELAY));
    else this.callback();
  }

  cancel(): void {
    clearTimeout(this.handle);
  }
}

export type Timer = ReturnType<typeof setTimeout> | ChainedTimer;

/** Calls `callback` after `delay` ms (a finite number; a longer one than Node takes is chained). */
export function setTimer(callback: () => void, delay: number): Timer {
  return delay <= MAX_TIMER_DELAY ? setTimeout(callback, delay) : new ChainedTimer(callback, delay);
}

export function clearTimer(timer: Timer): void {
  if (timer instanceof ChainedTimer) timer.cancel();
  else clearTimeout(timer);
}
