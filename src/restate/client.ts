/**
 * The client of the Restate host: the in-process API's shape (`spawn`, `get(id).send / call /
 * mount / unmount / getSnapshot`) over Restate's HTTP ingress. Every `send` carries an
 * idempotency key, so a retried send is applied once.
 *
 * Never talks to the service process directly: only to the ingress.
 */
import { randomUUID } from 'node:crypto';
import type { AgentData } from '../core/agent-value.js';
import { errorInfo } from '../core/errors.js';
import { createSignal, type Signal } from '../core/signal.js';
import { RuntimeError } from '../core/runtime-error.js';
import type { InstructionObject } from '../core/instruction.js';
import { DIRECTORY, REPLIES, type Answer, type CallAnswer, type MountRequest, type SpawnRequest } from './protocol.js';

/** Options of `send` on the Restate host. */
export interface RestateSendOptions {
  /** Applied once per key: a send retried with the same key is not applied again. Default: a fresh key. */
  idempotencyKey?: string;
}

/** An agent served by a Restate host, as the client reaches it. */
export interface RestateAgentRef {
  readonly id: string;
  /** Queues a signal; resolves once Restate has accepted it durably. */
  send(signal: Signal | string, data?: unknown, options?: RestateSendOptions): Promise<void>;
  /**
   * Sends a signal and waits for the reply; rejects with a `RuntimeError` carrying the typed
   * error. A reply the agent defers (a model turn, a skill answering later) is waited for:
   * Restate keeps it, so it arrives even across restarts of the service processes.
   */
  call(signal: Signal | string, data?: unknown, options?: RestateSendOptions): Promise<unknown>;
  /** Runs actions by name, as one step (`{ action, skill?, params? }`, or a list of them). */
  run(instructions: InstructionObject | readonly InstructionObject[]): Promise<unknown>;
  mount(skill: string, config?: Record<string, unknown>): Promise<void>;
  unmount(skill: string): Promise<void>;
  /** The agent's plain data as Restate holds it. */
  getSnapshot(): Promise<AgentData<Record<string, unknown>>>;
  /** Makes `subscriber` receive every signal this agent emits. */
  subscribe(subscriber: string): Promise<void>;
  stop(): Promise<void>;
}

/** A connection to a Restate ingress serving agents (see `restateAgents`). */
export interface RestateClient {
  /**
   * Creates an agent of `definition` (by name) and runs its mount hooks. An id already taken
   * rejects with `duplicate_agent`, unless the spawn is a retry with the same `idempotencyKey`.
   */
  spawn(definition: string, options?: { id?: string; state?: Record<string, unknown>; idempotencyKey?: string }): Promise<RestateAgentRef>;
  /** The agent with this id (its definition is looked up once, on first use). */
  get(id: string): RestateAgentRef;
}

/** Whether a failed fetch only timed out waiting for the response to begin (the server is there, the answer is not yet). */
function stillWaiting(error: unknown): boolean {
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return code === 'UND_ERR_HEADERS_TIMEOUT';
}

/** Connects to a Restate ingress, e.g. `connectRestate('http://127.0.0.1:8080')`. */
export function connectRestate(ingressUrl: string): RestateClient {
  const base = ingressUrl.replace(/\/+$/, '');
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}): Promise<unknown> => {
    const response = await fetch(`${base}/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body ?? null) });
    const text = await response.text();
    if (!response.ok) throw new RuntimeError(errorInfo('signal_failed', `Restate ingress answered ${response.status} for ${path}: ${text}`, { subject: path }));
    return text === '' ? undefined : JSON.parse(text);
  };
  const answered = (answer: unknown, id: string): unknown => {
    const envelope = answer as Answer;
    if (!envelope.ok) throw new RuntimeError(envelope.error, id);
    return envelope.value;
  };
  const definitions = new Map<string, string>();
  const definitionOf = async (id: string): Promise<string> => {
    const known = definitions.get(id);
    if (known !== undefined) return known;
    const found = (await post(`${DIRECTORY}/${encodeURIComponent(id)}/lookup`, null)) as string | null;
    if (found === null) throw new RuntimeError(errorInfo('unknown_agent', `no agent '${id}'`, { subject: id }), id);
    definitions.set(id, found);
    return found;
  };
  /**
   * Waits for a deferred answer. Waiting changes nothing, so a wait cut off (the ingress
   * restarted, a proxy closed the connection) is asked again: five times, 0.2 s to 3.2 s apart.
   * A wait that merely lasts is asked again for as long as it takes.
   */
  const waitForReply = async (reply: string): Promise<unknown> => {
    for (let attempt = 0; ; ) {
      try {
        return await post(`${REPLIES}/${encodeURIComponent(reply)}/wait`, null);
      } catch (error) {
        // An answer of the ingress (an HTTP error) is not a cut connection: it stands.
        if (error instanceof RuntimeError) throw error;
        // Node's fetch gives up on a response that has not begun within five minutes: an answer
        // awaited longer (an approval, a person) is asked for again at once, as long as it takes.
        if (stillWaiting(error)) continue;
        if (attempt >= 5) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt++));
      }
    }
  };
  const toSignal = (signal: Signal | string, data: unknown): Signal => (typeof signal === 'string' ? createSignal(signal, data as undefined) : signal);

  const refOf = (id: string): RestateAgentRef => {
    const at = async (handler: string) => `${encodeURIComponent(await definitionOf(id))}/${encodeURIComponent(id)}/${handler}`;
    return {
      id,
      async send(signal, data, options) {
        await post(`${await at('send')}/send`, toSignal(signal, data), { 'idempotency-key': options?.idempotencyKey ?? randomUUID() });
      },
      async call(signal, data, options) {
        const answer = (await post(await at('call'), toSignal(signal, data), options?.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {})) as CallAnswer;
        if (answer.ok === 'deferred') return answered(await waitForReply(answer.reply), id);
        return answered(answer, id);
      },
      async run(instructions) {
        return answered(await post(await at('run'), instructions), id);
      },
      async mount(skill, config) {
        const request: MountRequest = { skill, ...(config ? { config } : {}) };
        answered(await post(await at('mount'), request), id);
      },
      async unmount(skill) {
        answered(await post(await at('unmount'), skill), id);
      },
      async getSnapshot() {
        return answered(await post(await at('snapshot'), null), id) as AgentData<Record<string, unknown>>;
      },
      async subscribe(subscriber) {
        answered(await post(await at('subscribe'), { definition: await definitionOf(subscriber), id: subscriber }), id);
      },
      async stop() {
        answered(await post(await at('stop'), null), id);
        definitions.delete(id);
      },
    };
  };

  return {
    async spawn(definition, options) {
      const id = options?.id ?? randomUUID();
      const request: SpawnRequest = { definition, ...(options?.state ? { state: options.state } : {}) };
      answered(await post(`${encodeURIComponent(definition)}/${encodeURIComponent(id)}/spawn`, request, options?.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}), id);
      definitions.set(id, definition);
      return refOf(id);
    },
    get: refOf,
  };
}
