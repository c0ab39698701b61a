/**
 * What an inspector has streamed and not sent yet, and closing its connection once it is all
 * out: `startInspector`'s `stop()` flushes before it closes, within a time-out it reports.
 */
import type { InspectionEvent, Observer } from 'xstate';
import WebSocket from 'ws';

/** What `InspectorHandle.stop()` managed to send before closing. */
export interface InspectorStopped {
  /** Everything the application had streamed reached the server before the connection closed. */
  flushed: boolean;
  /** Inspection events still waiting to be sent when the time-out passed, or dropped because the server had closed the connection (0 when flushed). */
  unsent: number;
}

/**
 * The inspection events on their way out. The Stately inspector converts and sends each event
 * on a timer of its own (`setTimeout(0)` in Node); a marker timer set after them runs after
 * them, so once it has run for the latest event, everything handed in has been sent.
 */
export class Outbox {
  private queued = 0;
  private sent = 0;
  private marking = false;
  private readonly waiting: (() => void)[] = [];
  readonly inspect: Observer<InspectionEvent>;

  constructor(pass: (event: InspectionEvent) => void) {
    this.inspect = {
      next: (event) => {
        this.queued++;
        pass(event);
        this.mark();
      },
    };
  }

  /** Events handed in and not sent yet. */
  get unsent(): number {
    return this.queued - this.sent;
  }

  /** Resolves once every event handed in so far has been sent. */
  drained(): Promise<void> {
    if (this.unsent === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private mark(): void {
    if (this.marking) return;
    this.marking = true;
    const upTo = this.queued;
    setTimeout(() => {
      this.marking = false;
      this.sent = upTo;
      if (this.unsent > 0) this.mark();
      else for (const resolve of this.waiting.splice(0)) resolve();
    }, 0);
  }
}

/** What closing needs of a `ws` socket (declared here so that the shipped types do not need `@types/ws`). */
interface ClosingSocket {
  readonly readyState: number;
  once(event: 'close', listener: () => void): unknown;
  close(): void;
  terminate(): void;
}

/**
 * Waits for the outbox to drain, then closes the socket and waits for the server's close, which
 * comes after it has read everything sent before: all of it within `timeout`, or the socket is cut.
 */
export async function closeFlushed(socket: ClosingSocket, outbox: Outbox, timeout: number): Promise<InspectorStopped> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), timeout)));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  try {
    // Already closed (the server went away): what is on its way is handed to the closed socket,
    // which drops it, before the result is told.
    if (socket.readyState >= WebSocket.CLOSING) {
      await Promise.race([outbox.drained(), expired]);
      return { flushed: outbox.unsent === 0, unsent: outbox.unsent };
    }
    if ((await Promise.race([outbox.drained(), expired])) !== 'expired') {
      socket.close();
      if ((await Promise.race([closed, expired])) !== 'expired') return { flushed: true, unsent: 0 };
    }
    const unsent = outbox.unsent;
    socket.terminate();
    return { flushed: false, unsent };
  } finally {
    clearTimeout(timer);
  }
}
