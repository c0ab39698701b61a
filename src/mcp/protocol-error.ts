/**
 * MCP errors as they cross the wire, once prefixed. The SDK's `McpError` puts
 * `MCP error <code>: ` before its message, and its protocol sends that message as it is; the
 * client's `McpError` adds the prefix again. A server therefore answers with the bare message,
 * and a client reading a server that did not collapses the doubled prefix.
 */
import { McpError } from '@modelcontextprotocol/sdk/types.js';

/** An error for a request handler to throw: the client reads `MCP error <code>: <message>`, once. */
export function protocolError(code: number, message: string, data?: unknown): McpError {
  const error = new McpError(code, message, data);
  // What the protocol sends: the client puts the prefix back.
  error.message = message;
  return error;
}

/** The message of an error a server answered with, its `MCP error <code>: ` said once. */
export function serverErrorMessage(error: McpError): string {
  const prefix = `MCP error ${error.code}: `;
  let message = error.message;
  while (message.startsWith(prefix + prefix)) message = message.slice(prefix.length);
  return message;
}
