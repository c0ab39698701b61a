/**
 * The function-tool shape language models take (OpenAI's `{ type: 'function', function: {...} }`,
 * which Anthropic and most SDKs accept too), and the one check of it. A leaf: skills declare
 * override tools with this type and the toolset builds them, so neither imports the other.
 *
 * Pure: no I/O, no XState.
 */
import { ACTION_NAME } from './action.js';
import { isPlainObject } from './plain.js';

/** A JSON Schema object, as tools carry their parameters. */
export type JsonSchema = Record<string, unknown>;

/** An OpenAI-style function tool. */
export interface FunctionTool {
  type: 'function';
  function: {
    name: string;
    description: string;
    parameters: JsonSchema;
    strict?: boolean;
  };
}

/**
 * Why `tool` is not an OpenAI-style function tool (`{ type: 'function', function: { name,
 * description, parameters } }` with a valid tool name), or undefined when it is.
 */
export function toolProblem(tool: unknown): string | undefined {
  if (!isPlainObject(tool) || tool.type !== 'function' || !isPlainObject(tool.function)) {
    return "is not a function tool ({ type: 'function', function: { name, description, parameters } })";
  }
  const { name, description, parameters } = tool.function;
  if (typeof name !== 'string' || !ACTION_NAME.test(name)) return `has name ${JSON.stringify(name)}, which is not a valid tool name`;
  if (typeof description !== 'string') return `('${name}') needs a description string`;
  if (!isPlainObject(parameters)) return `('${name}') needs parameters as a JSON Schema object`;
  return undefined;
}
