/**
 * The applications streaming to one inspection server, kept apart. Every XState system numbers
 * its actors from `x:0`, so two applications connected to one `skillstate inspect` would name
 * different actors alike: each id a connection sends (`sessionId`, `parentId`, `rootId`,
 * `sourceId`) is put in that connection's namespace (`app2/x:0`), and each actor message says
 * which application it belongs to — the label and process id the application introduced itself
 * with when it connected (`startInspector({ label })`).
 *
 * Pure: no sockets here; the server passes each message through its connection's namespace.
 */

import { CHAT_DELTA } from './steering.js';

/** The message an application sends first: who it is. Not relayed to viewers. */
export const APP_HELLO = '@skillstate.app';

/** An application as viewers are told of it, on each of its actor messages (`app`). */
export interface InspectedApp {
  /** The connection's namespace, unique on this server: `app1`, `app2`, ... */
  id: string;
  /** What the application called itself (default: its script's file name). */
  label: string;
  /** Its process id, when it said. */
  pid?: number;
}

/** What `startInspector` sends when it connects. */
export interface AppHello {
  type: typeof APP_HELLO;
  label: string;
  pid: number;
}

const IDS = ['sessionId', 'parentId', 'rootId', 'sourceId'] as const;

/** One application connection: its namespace, and what it said of itself. */
export class AppNamespace {
  readonly app: InspectedApp;

  constructor(id: string) {
    this.app = { id, label: id };
  }

  /** A message as viewers get it: its ids in this namespace, an actor naming its application. Undefined for the hello, which is kept, not relayed. */
  relay(text: string): string | undefined {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return text; // not a message of the format: passed on as it came
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return text;
    if (message.type === APP_HELLO) {
      if (typeof message.label === 'string' && message.label.trim() !== '') this.app.label = message.label.trim().slice(0, 200);
      if (typeof message.pid === 'number' && Number.isInteger(message.pid)) this.app.pid = message.pid;
      return undefined;
    }
    for (const key of IDS) if (typeof message[key] === 'string') message[key] = `${this.app.id}/${message[key]}`;
    // Actors, and the pieces of answers streamed for them, name their application.
    if (message.type === '@xstate.actor' || message.type === CHAT_DELTA) message.app = { ...this.app };
    return JSON.stringify(message);
  }
}
