/**
 * The turn machine: one actor per turn of a model-driven agent (`<agent>/turns/<n>`), whose
 * states are what a person watching the inspector expects: `working` — `thinking` while the
 * model answers, `acting` while a tool call runs through the agent —, `awaiting-approval` while
 * a tool call waits for a person, and the endings `answered`, `failed` and `cancelled`.
 *
 * The machine holds no conversation state: the agent's state does. The work reads the turn from
 * the agent, does the slow part and records each result as a step of the agent; `next` then goes
 * where the agent's state says the turn is. So a turn restored from a snapshot starts in `next`
 * and lands where the snapshot left it.
 */
import { assign, setup, type ActorRefFrom } from 'xstate';
import type { TurnStatus } from './conversation.js';

/** Where a turn is: in flight (`TurnStatus`) or ended. */
export type TurnPhase = TurnStatus | 'answered' | 'failed' | 'cancelled';

/** What the work is doing at a given moment, for the machine to show. */
export type TurnActivity = 'thinking' | 'acting';

/** The slow work of a turn, done by the driver, and where the turn is now. */
export interface TurnWork {
  /** Moves turn `n` on from where the agent's state says it is; tells `notify` what it is doing. */
  work(n: number, abort: AbortSignal, notify: (activity: TurnActivity) => void): Promise<void>;
  /** Where turn `n` is now, as the agent's state says. */
  phase(n: number): TurnPhase;
  /** Work failed unexpectedly (a bug, not a model or tool error): the driver ends the turn. */
  crashed(n: number, error: unknown): void;
}

export interface TurnInput {
  agent: string;
  n: number;
  phase: TurnPhase;
  work: TurnWork;
}

interface TurnContext {
  agent: string;
  n: number;
  phase: TurnPhase;
  work: TurnWork;
  /** Aborts the work in flight: when the turn is cancelled, or its actor stopped (`stopTurn`). */
  abort: AbortController;
}

/**
 * Events a turn actor takes: look at the agent again (an approval came), what the work does, or
 * stop at once; and the end of a run of the work (`worked`, or `crashed` with what it threw).
 */
export type TurnEvent = { type: 'resume' } | { type: 'cancel' } | { type: 'thinking' } | { type: 'acting' } | { type: 'worked' } | { type: 'crashed'; error: unknown };

const to = (phase: TurnPhase, target: string) => ({ guard: { type: 'at' as const, params: { phase } }, target });

export const turnMachine = setup({
  types: {} as { context: TurnContext; input: TurnInput; events: TurnEvent },
  guards: { at: ({ context }, params: { phase: TurnPhase }) => context.phase === params.phase },
  actions: {
    // The work runs beside the actor, which hears how it ended. (Not an invoked promise actor: a
    // child actor per run cost more than the rest of the turn's life in the machine.) An ending
    // heard after the actor stopped is dropped.
    work: ({ context, self }) => {
      const tell = (event: TurnEvent) => {
        if (self.getSnapshot().status === 'active') self.send(event);
      };
      const notify = (activity: TurnActivity) => self.send({ type: activity });
      context.work.work(context.n, context.abort.signal, notify).then(
        () => tell({ type: 'worked' }),
        (error: unknown) => tell({ type: 'crashed', error }),
      );
    },
    crashed: ({ context, event }) => context.work.crashed(context.n, (event as { error?: unknown }).error),
    abort: ({ context }) => context.abort.abort(),
  },
}).createMachine({
  id: 'turn',
  context: ({ input }) => ({ ...input, abort: new AbortController() }),
  initial: 'next',
  states: {
    /**
     * Goes where the agent's state says the turn is, read afresh: an approval may have come
     * while the work that led here was finishing.
     */
    next: {
      entry: assign({ phase: ({ context }) => context.work.phase(context.n) }),
      always: [
        to('thinking', 'working'),
        to('acting', 'working.acting'),
        to('awaiting-approval', 'awaiting-approval'),
        to('answered', 'answered'),
        to('cancelled', 'cancelled'),
        { target: 'failed' },
      ],
    },
    working: {
      entry: 'work',
      on: {
        worked: { target: 'next' },
        crashed: { target: 'failed', actions: 'crashed' },
      },
      initial: 'thinking',
      states: {
        thinking: { on: { acting: 'acting' } },
        acting: { on: { thinking: 'thinking' } },
      },
    },
    'awaiting-approval': {
      on: { resume: { target: 'next' } },
    },
    answered: { type: 'final' },
    failed: { type: 'final' },
    cancelled: { type: 'final', entry: 'abort' },
  },
  on: { cancel: { target: '.cancelled' } },
});

/** Stops a turn actor and the work it has in flight (its model request is aborted). */
export function stopTurn(actor: TurnActor): void {
  actor.stop();
  actor.getSnapshot().context.abort.abort();
}

/** A running turn actor. */
export type TurnActor = ActorRefFrom<typeof turnMachine>;

/** A turn actor's state as people read it: the innermost state's name. */
export function turnStateName(value: unknown): string {
  let current = value;
  while (typeof current === 'object' && current !== null) current = Object.values(current)[0];
  return String(current);
}
