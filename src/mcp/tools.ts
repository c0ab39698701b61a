/**
 * An agent's tools as MCP tools, and a tool call's outcome as an MCP result.
 *
 * The tool list is the agent's own toolset (`ref.toolset()`, the source `toolsForAgent` uses), so a
 * language model sees the same names, descriptions and input schemas whether it reaches the agent
 * through MCP or through a model loop. An action that declares an object output schema gets an
 * MCP `outputSchema`, and its results carry `structuredContent`.
 *
 * A failed call is an MCP tool result with `isError: true` whose text is the typed error (code,
 * message, culprit): never a protocol error, so a host shows it to its model, which can correct
 * itself.
 *
 * Pure apart from reading the agent's committed toolset: no transport, no I/O.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { AgentRef, AnyAction, ErrorInfo } from '../index.js';
import type { JsonSchema } from '../core/function-tool.js';
import type { Toolset } from '../core/toolset.js';
import { toErrorInfo } from '../core/errors.js';
import { catalogOf } from '../core/agent-value.js';
import { isPlainObject } from '../core/plain.js';

/** The `_meta` key under which a failed call's `ErrorInfo` travels, for clients that read it. */
export const ERROR_META_KEY = 'skillstate/error';

const outputSchemas = new WeakMap<AnyAction, JsonSchema | null>();

/** The JSON Schema of an action's output when it is an object (MCP requires one), else null. */
function outputJsonSchema(action: AnyAction): JsonSchema | null {
  let schema = outputSchemas.get(action);
  if (schema === undefined) {
    schema = null;
    if (action.output) {
      try {
        const generated = z.toJSONSchema(action.output, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
        delete generated.$schema;
        if (generated.type === 'object') schema = generated;
      } catch {
        // An output zod cannot express as JSON Schema is offered without one: results still carry text.
      }
    }
    outputSchemas.set(action, schema);
  }
  return schema;
}

/** The action a tool binding points at, looked up in the agent's current skills. */
function boundAction(catalog: ReturnType<typeof catalogOf>, toolset: Toolset, tool: string): AnyAction | undefined {
  const binding = toolset.bindings.get(tool);
  if (!binding || !catalog) return undefined;
  const actions = binding.skill === undefined ? catalog.blueprint.ownActions : catalog.skills.get(binding.skill)?.spec.actions;
  return actions?.find((action) => action.name === binding.action);
}

/** The agent's tools in the shape of an MCP `tools/list` answer. */
export function mcpTools(ref: AgentRef<object>): Tool[] {
  const toolset = ref.toolset();
  const catalog = catalogOf(ref.getSnapshot().agent);
  return toolset.tools.map(({ function: fn }) => {
    // MCP wants an object schema at the root; an override tool may omit the type.
    const inputSchema = (fn.parameters.type === 'object' ? fn.parameters : { ...fn.parameters, type: 'object' }) as Tool['inputSchema'];
    const tool: Tool = { name: fn.name, description: fn.description, inputSchema };
    const action = boundAction(catalog, toolset, fn.name);
    const output = action ? outputJsonSchema(action) : null;
    if (output) tool.outputSchema = output as Tool['outputSchema'];
    return tool;
  });
}

/** A successful call's output as an MCP result: JSON text, plus structured content for objects. */
export function successResult(output: unknown): CallToolResult {
  const text = typeof output === 'string' ? output : output === undefined ? 'null' : JSON.stringify(output);
  const outcome: CallToolResult = { content: [{ type: 'text', text }] };
  if (isPlainObject(output)) outcome.structuredContent = output;
  return outcome;
}

/** The typed error of a failed call, as plain data. */
export function errorOf(error: unknown): ErrorInfo {
  return toErrorInfo(error, 'action_failed');
}

/** A failed call as an MCP result: `isError`, the error as JSON text and under `_meta`. */
export function errorResult(info: ErrorInfo): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify({ error: info }) }],
    _meta: { [ERROR_META_KEY]: info },
  };
}

/** Runs one MCP tool call through the agent's pipeline; never throws. */
export async function callAgentTool(ref: AgentRef<object>, name: string, args: unknown, timeout: number | undefined): Promise<CallToolResult> {
  try {
    const output = await ref.callTool(name, args ?? {}, timeout === undefined ? undefined : { timeout });
    return successResult(output);
  } catch (error) {
    return errorResult(errorOf(error));
  }
}

/** A fingerprint of a tool list: equal lists need no `list_changed`. */
export function toolListKey(tools: readonly Tool[]): string {
  return JSON.stringify(tools);
}
