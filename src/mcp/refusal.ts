/**
 * An MCP server over HTTP refusing a request for its credentials (401 Unauthorized, 403
 * Forbidden: a bearer token missing or wrong, as `skillstate mcp --token` answers), told apart
 * from a server that cannot be reached, so that a caller fixes its token rather than waits. The
 * SDK's client reports such an answer as a `StreamableHTTPError` carrying the status, or as an
 * `UnauthorizedError` when an OAuth provider could not authorize.
 */
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** The HTTP status of a refusal of credentials, or undefined when `error` is something else. */
export function refusedStatus(error: unknown): number | undefined {
  if (error instanceof StreamableHTTPError && (error.code === 401 || error.code === 403)) return error.code;
  if (error instanceof UnauthorizedError) return 401;
  return undefined;
}

/** What the server said as it refused: the message of the JSON-RPC error it answered with, else its text. */
export function refusalText(error: Error): string {
  const body = error.message.replace(/^Streamable HTTP error: (Error POSTing to endpoint: )?/, '');
  try {
    const answer = JSON.parse(body) as { error?: { message?: unknown } };
    if (typeof answer?.error?.message === 'string') return answer.error.message;
  } catch {
    // Not JSON: the body as it is.
  }
  return body;
}
