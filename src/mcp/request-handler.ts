/**
 * `handleRequest(server, schema, handler)`: the SDK's `setRequestHandler`, answering a request
 * whose params do not fit the method's schema with JSON-RPC's `-32602` (invalid params) and a
 * one-line message naming each field, as MCP asks of a malformed request.
 *
 * The SDK checks a request against its schema before the handler runs, and a request that does
 * not fit is answered `-32603` (internal error) with the schema library's issues dumped as JSON:
 * to the client, the server's fault, not the request's. Here the SDK is given a schema that only
 * matches the method, and the request is checked against the method's own schema in the handler.
 * (`tools/call` keeps the SDK's own check, which answers `-32602` already, once the method matches.)
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AnyObjectSchema, SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { formatIssues, toIssues } from '../core/errors.js';
import { protocolError } from './protocol-error.js';

type Handler<T extends AnyObjectSchema> = (request: SchemaOutput<T>, extra: Parameters<Parameters<Server['setRequestHandler']>[1]>[1]) => ReturnType<Parameters<Server['setRequestHandler']>[1]>;

/** A schema with the `method` literal and `safeParse` every request schema of the SDK and of this package has. */
interface RequestSchema {
  shape: { method: { value: string } };
  safeParse(value: unknown): { success: true; data: unknown } | { success: false; error: { issues: Parameters<typeof toIssues>[0] } };
}

/** Registers `handler` for the method of `schema`; a request whose params do not fit it is answered `-32602`. */
export function handleRequest<T extends AnyObjectSchema>(server: Server, schema: T, handler: Handler<T>): void {
  const request = schema as unknown as RequestSchema;
  const method = request.shape.method.value;
  server.setRequestHandler(z.object({ method: z.literal(method) }).loose(), (raw, extra) => {
    const checked = request.safeParse(raw);
    if (!checked.success) throw protocolError(ErrorCode.InvalidParams, `invalid ${method} request: ${formatIssues(toIssues(checked.error.issues))}`);
    return handler(checked.data as SchemaOutput<T>, extra);
  });
}
