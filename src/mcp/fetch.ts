/**
 * `fetch` for the MCP client's HTTP transport, with an abort signal of its own per request.
 *
 * The transport passes one signal, alive as long as the connection, to every request it makes.
 * `fetch` adds an abort listener to that signal for each request and removes it only when the
 * request is garbage-collected, so over a long-lived connection the listeners pile up: memory that
 * grows with the number of tool calls, and Node's `MaxListenersExceededWarning`. Here each request
 * gets a signal of its own, tied to the transport's by one listener that is removed as soon as the
 * response is over: its body read to the end, cancelled or failed (a streamed response keeps it
 * while it streams, so closing the connection still stops the stream).
 */
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
