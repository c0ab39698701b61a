/**
 * The turn machine: one actor per turn of a model-driven agent (`<agent>/turns/<n>`), whose
 * states are what a person watching the inspector expects: `thinking` (the model is asked),
 * `acting` (a tool call runs through the agent), `awaiting-approval` (a tool call waits for a
 * person), and the endings `answered`, `failed` and `cancelled`.
 *
 * The machine holds no conversation state: the agent's state does. Each piece of work reads the
 * turn from the agent, does the slow part, records the result as a step of the agent and returns
 * the status the step left; `next` goes where that status says. So a turn restored from a
 * snapshot starts in `next` and lands where the snapshot left it.
 */
import { assign, fromPromise, setup, type ActorRefFrom } from 'xstate';
import type { TurnStatus } from './conversation.js';

/** Where a turn is: in flight (`TurnStatus`) or ended. */
export type TurnPhase = TurnStatus | 'answered' | 'failed' | 'cancelled';

/** The slow work of a turn, done by the driver, and where the turn is now. */
export interface TurnWork {
  think(n: number, abort: AbortSignal): Promise<TurnPhase>;
  act(n: number, abort: AbortSignal): Promise<TurnPhase>;
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
}

/** Events a turn actor takes: look at the agent again (an approval came), or stop at once. */
export type TurnEvent = { type: 'resume' } | { type: 'cancel' };

const job = (kind: 'think' | 'act') =>
  fromPromise<TurnPhase, { work: TurnWork; n: number }>(({ input, signal }) => input.work[kind](input.n, signal));

const to = (phase: TurnPhase, target: string) => ({ guard: { type: 'at' as const, params: { phase } }, target });

export const turnMachine = setup({
  types: {} as { context: TurnContext; input: TurnInput; events: TurnEvent },
  actors: { think: job('think'), act: job('act') },
  guards: { at: ({ context }, params: { phase: TurnPhase }) => context.phase === params.phase },
  actions: {
    crashed: ({ context, event }) => context.work.crashed(context.n, (event as { error?: unknown }).error),
  },
}).createMachine({
  id: 'turn',
  context: ({ input }) => ({ ...input }),
  initial: 'next',
  states: {
    /**
     * Goes where the agent's state says the turn is, read afresh: an approval may have come
     * while the work that led here was finishing.
     */
    next: {
      entry: assign({ phase: ({ context }) => context.work.phase(context.n) }),
      always: [
        to('thinking', 'thinking'),
        to('acting', 'acting'),
        to('awaiting-approval', 'awaiting-approval'),
        to('answered', 'answered'),
        to('cancelled', 'cancelled'),
        { target: 'failed' },
      ],
    },
    thinking: {
      invoke: {
        src: 'think',
        input: ({ context }) => ({ work: context.work, n: context.n }),
        onDone: { target: 'next' },
        onError: { target: 'failed', actions: 'crashed' },
      },
    },
    acting: {
      invoke: {
        src: 'act',
        input: ({ context }) => ({ work: context.work, n: context.n }),
        onDone: { target: 'next' },
        onError: { target: 'failed', actions: 'crashed' },
      },
    },
    'awaiting-approval': {
      on: { resume: { target: 'next' } },
    },
    answered: { type: 'final' },
    failed: { type: 'final' },
    cancelled: { type: 'final' },
  },
  on: { cancel: { target: '.cancelled' } },
});

/** A running turn actor. */
export type TurnActor = ActorRefFrom<typeof turnMachine>;
