/**
 * `fetch` for the MCP client's HTTP transport: an abort signal of its own per request, and a watch
 * on what a request tells about the connection.
 *
 * The transport passes one signal, alive as long as the connection, to every request it makes.
 * `fetch` adds an abort listener to that signal for each request and removes it only when the
 * request is garbage-collected, so over a long-lived connection the listeners pile up: memory that
 * grows with the number of tool calls, and Node's `MaxListenersExceededWarning`. Here each request
 * gets a signal of its own, tied to the transport's by one listener that is removed as soon as the
 * response is over: its body read to the end, cancelled or failed (a streamed response keeps it
 * while it streams, so closing the connection still stops the stream).
 *
 * Over HTTP there is no connection to see close; a request is what tells that the server is gone:
 * it gets no answer at all (refused, reset, no such host), or a 404 for the session it names (the
 * server restarted, or ended the session). Every other answer, whatever its status, is the
 * answer to that one request.
 *
 * Every answer is read only up to a limit per message (`boundedAnswer`): a huge or endless
 * answer fails the requests it answers, never held whole.
 */
import { boundedAnswer } from './bounded-answer.js';

type Fetch = typeof fetch;

export const requestScopedFetch: Fetch = async (input, init) => {
  const outer = init?.signal;
  if (!outer || outer.aborted) return fetch(input, init);
  const own = new AbortController();
  const forward = () => own.abort(outer.reason);
  outer.addEventListener('abort', forward, { once: true });
  const release = () => outer.removeEventListener('abort', forward);
  let response: Response;
  try {
    response = await fetch(input, { ...init, signal: own.signal });
  } catch (error) {
    release();
    throw error;
  }
  if (response.body === null) {
    release();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          release();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        release();
        controller.error(error);
      }
    },
    cancel(reason) {
      release();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
};

/** What requests tell about their connection. */
export interface ConnectionWatch {
  /** A request got no answer at all; not said of a request the connection aborted itself. */
  unanswered(why: string): void;
  /** The server answered 404 to a request naming a session: it no longer has the session. */
  sessionGone(): void;
}

/** The message of a failed `fetch`, with the network error that caused it. */
function networkError(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error instanceof Error ? error.message : String(error)}${cause}`;
}

/** The most bytes of one message read from a server, and the server's name for errors. */
export interface AnswerLimit {
  server: string;
  bytes: number;
}

/** `requestScopedFetch`, telling `watch` when a request shows the connection is gone, and reading each answer within `limit`. */
export function watchedFetch(watch: ConnectionWatch, limit: AnswerLimit): Fetch {
  return async (input, init) => {
    let response: Response;
    try {
      response = await requestScopedFetch(input, init);
    } catch (error) {
      if (!init?.signal?.aborted) watch.unanswered(networkError(error));
      throw error;
    }
    // A 404 for a request of the session says the session is gone; one for the optional stream of
    // server messages (a GET) says only that the server offers none.
    const method = (init?.method ?? 'GET').toUpperCase();
    if (response.status === 404 && method !== 'GET' && new Headers(init?.headers).has('mcp-session-id')) watch.sessionGone();
    return boundedAnswer(response, init?.body, limit.server, limit.bytes);
  };
}
