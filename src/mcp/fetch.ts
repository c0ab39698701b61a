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
 * answer fails the requests it answers, never held whole. An answer that does not come at all
 * (headers, then nothing) is bounded by the client's request timeout; once every request it
 * answers is cancelled (as the client does when it times out), it is no longer waited for.
 */
import { boundedAnswerTo, postedIds, type RequestId } from './bounded-answer.js';

type Fetch = typeof fetch;

export const requestScopedFetch: Fetch = (input, init) => scopedFetch(input, init, undefined);

/**
 * `requestScopedFetch`; with `scope`, the request's own signal is `scope.controller`'s (aborted
 * by its caller too), and `scope.over` is called once the response is over.
 */
async function scopedFetch(input: Parameters<Fetch>[0], init: Parameters<Fetch>[1], scope: { controller: AbortController; over(): void } | undefined): Promise<Response> {
  const outer = init?.signal;
  if (!scope && (!outer || outer.aborted)) return fetch(input, init);
  const own = scope?.controller ?? new AbortController();
  const forward = () => own.abort(outer!.reason);
  if (outer?.aborted) forward();
  else outer?.addEventListener('abort', forward, { once: true });
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    outer?.removeEventListener('abort', forward);
    scope?.over();
  };
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
}

/**
 * The message a response given up on is aborted with: every request its POST carried was
 * cancelled (the client's request timeout). Whatever reads the response fails with it.
 */
export const ABANDONED_ANSWER = 'skillstate: the answer was given up on: every request it answers was cancelled';

/**
 * POSTs of requests whose answer is still being read, so that an answer whose requests were all
 * cancelled stops being read: a server that sent its headers and then nothing would otherwise
 * hold the request's socket for as long as the connection lasts, after the call timed out.
 */
class AnswersAwaited {
  private readonly byId = new Map<RequestId, Set<{ waiting: Set<RequestId>; controller: AbortController }>>();

  /** A POST carrying these requests; returns its scope for `scopedFetch`. */
  posted(ids: readonly RequestId[]): { controller: AbortController; over(): void } {
    const entry = { waiting: new Set(ids), controller: new AbortController() };
    for (const id of ids) {
      let entries = this.byId.get(id);
      if (!entries) this.byId.set(id, (entries = new Set()));
      entries.add(entry);
    }
    return { controller: entry.controller, over: () => this.forget(ids, entry) };
  }

  /** The client cancelled these requests: an answer left with none of its requests awaited is no longer read. */
  cancelled(ids: readonly RequestId[]): void {
    for (const id of ids) {
      for (const entry of [...(this.byId.get(id) ?? [])]) {
        entry.waiting.delete(id);
        if (entry.waiting.size === 0) entry.controller.abort(new Error(ABANDONED_ANSWER));
      }
    }
  }

  private forget(ids: readonly RequestId[], entry: { waiting: Set<RequestId>; controller: AbortController }): void {
    for (const id of ids) {
      const entries = this.byId.get(id);
      entries?.delete(entry);
      if (entries?.size === 0) this.byId.delete(id);
    }
  }
}

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
  const awaited = new AnswersAwaited();
  return async (input, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    const { requests, cancelled } = method === 'POST' ? postedIds(init?.body) : { requests: [], cancelled: [] };
    if (cancelled.length > 0) awaited.cancelled(cancelled);
    const scope = requests.length > 0 ? awaited.posted(requests) : undefined;
    let response: Response;
    try {
      response = await scopedFetch(input, init, scope);
    } catch (error) {
      if (!init?.signal?.aborted && !scope?.controller.signal.aborted) watch.unanswered(networkError(error));
      throw error;
    }
    // A 404 for a request of the session says the session is gone; one for the optional stream of
    // server messages (a GET) says only that the server offers none.
    if (response.status === 404 && method !== 'GET' && new Headers(init?.headers).has('mcp-session-id')) watch.sessionGone();
    return boundedAnswerTo(response, requests, limit.server, limit.bytes);
  };
}
