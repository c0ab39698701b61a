/**
 * `createAgentSystem`, the entry point: the runtime's system (`runtime/system.ts`) with the model
 * loop (`model/driver.ts`) beside its agents. The composition lives here, above both, so that
 * the runtime imports nothing of the model loop and the model loop reaches the runtime only
 * through the services of an extension (`runtime/extension.ts`).
 */
import { DefinitionError, reworded } from './core/errors.js';
import { CONVERSATION } from './model/conversation.js';
import { ConversationDriver } from './model/driver.js';
import type { ChatModel, Compactor } from './model/models.js';
import type { TelemetryOptions } from './telemetry/content.js';
import type { AgentRef } from './runtime/agent-ref.js';
import type { StartExtension } from './runtime/extension.js';
import { unknownOption } from './core/options.js';
import { closeRefusedStore } from './runtime/durability.js';
import { createRuntimeSystem, RUNTIME_OPTIONS, type AgentSystem } from './runtime/system.js';
import type { RuntimeOptions } from './runtime/system-runtime.js';

/** Options of `createAgentSystem`. */
export interface AgentSystemOptions extends RuntimeOptions {
  /**
   * Language models by name, for model-driven agents (the `conversation` skill's `model` config
   * names one; default `default`): any AI SDK provider model, such as `openai('gpt-4.1')`.
   */
  models?: Readonly<Record<string, ChatModel>>;
  /** Compactors by name: a conversation's `history.strategy` may name one instead of `summarize` or `drop`. */
  compactors?: Readonly<Record<string, Compactor>>;
  /**
   * What OpenTelemetry spans may record beyond names, ids, counts and codes: `{ recordContent: true }`
   * records prompts, completions and tool arguments and results (docs/observability.md).
   */
  telemetry?: TelemetryOptions;
}

/** The options `createAgentSystem` takes: one entry per key of `AgentSystemOptions`. */
const SYSTEM_OPTIONS = { ...RUNTIME_OPTIONS, models: true, compactors: true, telemetry: true } as const satisfies Record<keyof AgentSystemOptions, true>;

/**
 * Options of what `createAgentSystem` is given, given to it directly: where each one goes. Its
 * error says so, rather than only that the option is unknown.
 */
const NESTED_OPTIONS: Readonly<Record<string, string>> = {
  idleMs: 'passivate: { idleMs }',
  path: 'store: createSqliteStore({ path })',
  pageSize: 'store: createSqliteStore({ path, pageSize })',
};

/**
 * Creates an agent system.
 *
 * @example
 * const system = createAgentSystem();
 * const agent = system.spawn(MathAgent);
 * await agent.call(createSignal('calculator.add', { a: 1, b: 2 }));
 */
export function createAgentSystem(options: AgentSystemOptions = {}): AgentSystem {
  // A misspelled option would otherwise be ignored and its default used without a word.
  const unknown = typeof options === 'object' && options !== null ? unknownOption('createAgentSystem', options, SYSTEM_OPTIONS) : undefined;
  if (unknown) {
    closeRefusedStore(options.store);
    const nested = Object.hasOwn(NESTED_OPTIONS, unknown.subject!) ? NESTED_OPTIONS[unknown.subject!] : undefined;
    throw new DefinitionError(nested === undefined ? unknown : reworded(unknown, { message: `${unknown.message}; ${unknown.subject} goes in createAgentSystem({ ${nested} })` }));
  }
  return createRuntimeSystem(options, [conversations({ models: options.models, compactors: options.compactors, telemetry: options.telemetry })]);
}

/** The model loop as an extension: it runs the turns of model-driven agents. */
function conversations(options: Pick<AgentSystemOptions, 'models' | 'compactors' | 'telemetry'>): StartExtension {
  return (services) => {
    const driver = new ConversationDriver(services, options);
    return {
      // A restored agent may have a turn in flight: it goes on where the snapshot left it.
      restored: (ref) => {
        if (hasTurnInFlight(ref)) driver.adopt(ref.id);
      },
      stop: () => driver.stop(),
      // A turn in flight (or waiting for approval) keeps its agent in memory.
      keeps: (agent) => turnInFlight(agent.state),
    };
  };
}

/** Whether the agent's conversation has a turn in flight. */
function hasTurnInFlight(ref: AgentRef): boolean {
  return turnInFlight(ref.getSnapshot().state);
}

/** Whether a conversation's state (an agent's, under its key) has a turn in flight. */
function turnInFlight(state: object): boolean {
  const slice = (state as Record<string, unknown>)[CONVERSATION] as { turn?: unknown } | undefined;
  return slice?.turn != null;
}
