/**
 * What travels between an application and the viewers: the Stately inspector's message format
 * (`@xstate.actor`, `@xstate.event`, `@xstate.snapshot`), as plain JSON. The local viewer and the
 * Stately inspector read the same messages, so both can watch one application side by side.
 *
 * Also here: turning live XState values into plain JSON without throwing (cycles, functions,
 * BigInts, depth), and the default redaction. Pure: no I/O, no XState import.
 */

/** A machine snapshot as it travels: plain data. */
export interface InspectedSnapshot {
  status?: string;
  /** The state value: a state name, or an object for nested states (`{}` for a machine without states). */
  value?: unknown;
  context?: unknown;
  children?: Record<string, unknown>;
  [key: string]: unknown;
}

/** One message of the inspection stream, as the Stately inspector and the local viewer read it. */
export interface InspectionMessage {
  type: '@xstate.actor' | '@xstate.event' | '@xstate.snapshot';
  /** The actor the message is about (for an event: the actor that received it). */
  sessionId: string;
  /** `@xstate.actor`: the actor's id (an agent's id, `skill:<name>` for a lifecycle). */
  name?: string;
  /** `@xstate.actor`: the parent actor's session id. */
  parentId?: string;
  /** `@xstate.actor`: the machine definition (its config as JSON text), which the viewers draw. */
  definition?: string;
  /** `@xstate.actor` and `@xstate.snapshot`: the actor's snapshot. */
  snapshot?: InspectedSnapshot;
  /** `@xstate.event` and `@xstate.snapshot`: the event received (or that caused the snapshot). */
  event?: { type: string; [key: string]: unknown };
  /** Milliseconds since the epoch, as a string. */
  createdAt?: string;
  /**
   * `@xstate.actor`, as the inspection server relays it: the application the actor belongs to
   * (the server's id for its connection, the label it gave `startInspector`, its process id).
   */
  app?: { id: string; label: string; pid?: number };
  [key: string]: unknown;
}

/**
 * Changes or drops a message before it leaves the process: return the message to send (changed
 * or not), or `undefined` to send nothing.
 */
export type InspectionRedactor = (message: InspectionMessage) => InspectionMessage | undefined;

/** What a redacted value is replaced with. */
export const REDACTED = '[redacted]';

/** Deep enough for a conversation's tool call input in an agent's state (`snapshot.context.agent.state.conversation.messages[i].content[j].input`). */
const MAX_DEPTH = 20;

/**
 * A live value as plain JSON data: functions become `{ type: name }` (as the Stately inspector
 * shows them), objects with `toJSON` (actor refs) are converted by it, a cycle or anything
 * deeper than twenty levels becomes a short marker, and nothing throws.
 */
export function toPlain(value: unknown, depth = 0, ancestors: object[] = []): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'undefined' || typeof value === 'symbol') return undefined;
  if (typeof value === 'function') return { type: value.name || 'function' };
  if (depth >= MAX_DEPTH) return '[depth limit]';
  if (ancestors.includes(value)) return '[circular]';
  try {
    const json = (value as { toJSON?: unknown }).toJSON;
    if (typeof json === 'function' && !(value instanceof Date)) return toPlain(json.call(value), depth + 1, [...ancestors, value]);
    // An error's message and name are not enumerable: kept by hand, with its own fields (a code).
    if (value instanceof Error) {
      const fields = toPlain({ ...value }, depth + 1, [...ancestors, value]) as Record<string, unknown>;
      return { name: value.name, message: value.message, ...fields };
    }
    if (value instanceof Date) return value.toISOString();
    const inside = [...ancestors, value];
    if (Array.isArray(value)) return value.map((item) => toPlain(item, depth + 1, inside) ?? null);
    const plain: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const converted = toPlain((value as Record<string, unknown>)[key], depth + 1, inside);
      if (converted !== undefined) plain[key] = converted;
    }
    return plain;
  } catch {
    // a getter that throws, a revoked proxy: the inspector must not stop the actor it watches
    return '[unreadable]';
  }
}

/** Event fields that name things rather than carry data: kept by the default redaction (`agent`: the agent a system event is about). */
const NAMING_FIELDS = ['type', 'skill', 'agent'] as const;

function redactEvent(event: InspectionMessage['event']): InspectionMessage['event'] {
  if (!event) return event;
  const kept: { type: string; [key: string]: unknown } = { type: String(event.type) };
  for (const field of NAMING_FIELDS) if (typeof event[field] === 'string') kept[field] = event[field];
  const signal = event.signal as { type?: unknown } | undefined;
  // A signal's type says what happened without saying what it carried.
  if (signal && typeof signal === 'object' && typeof signal.type === 'string') kept.signal = { type: signal.type, data: REDACTED };
  for (const key of Object.keys(event)) if (!(key in kept)) kept[key] = REDACTED;
  return kept;
}

function redactSnapshot(snapshot: InspectedSnapshot | undefined): InspectedSnapshot | undefined {
  if (!snapshot || typeof snapshot !== 'object') return snapshot;
  const kept: InspectedSnapshot = { status: snapshot.status, value: snapshot.value };
  if ('context' in snapshot) kept.context = REDACTED;
  // Children are kept by id only: their own state travels in their own messages, redacted there.
  if (snapshot.children && typeof snapshot.children === 'object') kept.children = Object.fromEntries(Object.keys(snapshot.children).map((id) => [id, { id }]));
  for (const key of ['output', 'error', 'input', 'historyValue']) if (key in snapshot) kept[key] = REDACTED;
  return kept;
}

/** A machine definition without its initial context, which a machine given as an object may fill with data. */
function redactDefinition(definition: string): string | undefined {
  try {
    const config = JSON.parse(definition) as Record<string, unknown>;
    if (config && typeof config === 'object' && 'context' in config) config.context = REDACTED;
    return JSON.stringify(config);
  } catch {
    return undefined;
  }
}

/**
 * The default redaction (`startInspector({ redact: true })`): every machine's context (agent
 * state, skill config), every event payload (signal data, instructions, outputs, errors) and a
 * snapshot's output and error become `'[redacted]'`. What stays is what the viewers draw and
 * filter on: actor names and parents, machine definitions, state values, statuses, event types,
 * signal types, skill names and the agent a system event is about.
 */
export function redactInspectionMessage(message: InspectionMessage): InspectionMessage {
  const redacted: InspectionMessage = { ...message };
  if ('snapshot' in message) redacted.snapshot = redactSnapshot(message.snapshot);
  if ('event' in message) redacted.event = redactEvent(message.event);
  if (typeof message.definition === 'string') redacted.definition = redactDefinition(message.definition);
  return redacted;
}
