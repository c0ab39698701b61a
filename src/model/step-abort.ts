/**
 * The abort signal of model work (a model step, the steps of a turn one after another, a summary
 * request): it aborts when a parent signal does or when its own time-out fires, and lets go of
 * both when the work ends.
 *
 * It stands in for `AbortSignal.any` and `AbortSignal.timeout` on purpose: Node keeps a combined
 * or time-out signal that has an 'abort' listener alive for as long as it may still abort
 * (nodejs/node#48419, #55328, #55351), so the signal of a model step that answered — with every
 * listener the provider or the AI SDK left on it, and all they hold — would stay in memory for
 * the life of the process. Here the links are one plain listener per parent and one timer, and
 * `release()` removes both.
 */
export class StepAbort {
  private readonly controller = new AbortController();
  /** The pending timer: it may fire before the deadline (moved on since), and then waits for the rest. */
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When the time-out is due (epoch milliseconds); Infinity while paused. */
  private deadline = Infinity;
  private readonly parents: readonly AbortSignal[];
  /** Whether the time-out, not a parent, aborted the work. */
  timedOut = false;

  /** Starts the time-out of `ms` milliseconds at once; `parents` abort the work with their reason. */
  constructor(
    /** The time-out, in milliseconds. */
    readonly ms: number,
    ...parents: AbortSignal[]
  ) {
    this.parents = parents;
    const aborted = parents.find((parent) => parent.aborted);
    if (aborted) {
      this.controller.abort(aborted.reason);
      return;
    }
    for (const parent of parents) parent.addEventListener('abort', this.onParentAbort, { once: true });
    this.restart();
  }

  /** The signal to hand the work. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * Starts the time-out again from now, for the next piece of work on the same signal (the next
   * model step of a turn). Only the deadline moves: a timer already pending finds it moved when it
   * fires and waits for the rest, so a step costs no timer of its own.
   */
  restart(): void {
    if (this.controller.signal.aborted) return;
    this.deadline = Date.now() + this.ms;
    if (this.timer === undefined) this.timer = setTimeout(this.due, this.ms);
  }

  /** Stops the time-out until `restart()`; the parents still abort. */
  pause(): void {
    this.deadline = Infinity;
  }

  /** The work ended: nothing aborts it any more, and nothing here is held by its parents. */
  release(): void {
    this.deadline = Infinity;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    for (const parent of this.parents) parent.removeEventListener('abort', this.onParentAbort);
  }

  private readonly due = (): void => {
    this.timer = undefined;
    if (this.deadline === Infinity) return;
    const left = this.deadline - Date.now();
    if (left > 0) {
      this.timer = setTimeout(this.due, left);
      return;
    }
    this.timedOut = true;
    this.release();
    this.controller.abort(new Error(`no answer within ${this.ms} ms`));
  };

  private readonly onParentAbort = (event: Event): void => {
    this.release();
    this.controller.abort((event.target as AbortSignal).reason);
  };
}

/**
 * `work`, or the abort of `signal`, whichever comes first: a provider that ignores the abort
 * signal it was handed does not hold the turn past its time-out or its cancellation. The
 * listener goes when either settles (a signal keeps its listeners, and what they hold, as long as
 * it lives).
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      work.catch(() => {});
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
