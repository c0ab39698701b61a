/**
 * `mcpSkill(options)`: an MCP server as a skill. Its actions are the server's tools (names made
 * valid action names, arguments checked against each tool's JSON Schema before the call), and its
 * LLM tools carry the server's own schemas. Mount and unmount it like any skill.
 *
 * The client connection is the skill's child actor (`connection`): it connects when the skill
 * becomes active and closes (ending a stdio server's process) when it is unmounted. Its states —
 * `connecting`, `ready`, `failed` — show in the inspector. When the server process dies or the
 * connection drops (over HTTP: a request gets no answer, or a 404 for its session), the child
 * crashes and the skill's lifecycle restarts it under its policy (default: `permanent`, at most 3
 * restarts in 5 s, then the skill is `failed`). The child's connection waits up to
 * `connectTimeout` for an HTTP server that does not answer, so a server being restarted is
 * reconnected with a new session.
 *
 * `mcpSkill` connects once, briefly, to learn the server's tools, because a skill's actions are
 * fixed when it is mounted. When the server says its tools changed (`tools/list_changed`), the
 * connection asks its agent to run the skill's hidden `_refresh_tools` action, which remounts the
 * skill built from the new list in one step: the agent gets the `deregister_action` and
 * `register_action` effects, and the connection (same name, same children) keeps running. Until
 * that step runs, a tool the server removed is refused (`mcp_tool_removed`).
 *
 * Uses the public API of `skillstate`, and one documented entry of the runtime: an item event
 * sent to the agent's actor takes its turn in the agent's mailbox.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { assign, fromCallback, fromPromise, setup } from 'xstate';
import { z } from 'zod';
import { childSystemId } from '../../machines/skill-lifecycle.js';
import { DefinitionError, defineAction, defineSkill, fail, result, RuntimeError, type AnyAction, type AnySkill, type RestartPolicy } from '../index.js';
import { describeValue } from '../core/plain.js';
import type { FunctionTool, JsonSchema } from '../core/function-tool.js';
import { ACTION_NAME } from '../core/action.js';
import { DEFAULT_LIMITS, describeAddress, McpConnection, McpFailure, mcpErrorInfo, type ConnectionLimits, type McpServerAddress } from './connection.js';
import { ERROR_META_KEY } from './tools.js';
import { grandparentOf } from '../../machines/xstate-internals.js';

/** The child's id: its systemId is `<agent>/skills/<skill>/connection`. */
export const CONNECTION_CHILD = 'connection';
/** The hidden action that remounts the skill with the server's current tools (not offered to models). */
export const REFRESH_ACTION = '_refresh_tools';

export interface McpSkillBase {
  /** The skill's name (also its state key). */
  name: string;
  description?: string;
  /**
   * Milliseconds to connect and list the tools (default 10,000). The skill's connection to an
   * HTTP server that does not answer keeps trying for this long.
   */
  connectTimeout?: number;
  /** Milliseconds a tool call may take (default 30,000). */
  callTimeout?: number;
  /** Largest tool result accepted, in bytes of JSON (default 1 MiB). */
  maxOutputBytes?: number;
  /** How the connection is restarted when it drops (default `permanent`). */
  restart?: RestartPolicy;
  /** At most this many restarts within `withinMs` (default 3 in 5,000 ms); past it the skill fails. */
  maxRestarts?: number;
  withinMs?: number;
}

/** A server started as a subprocess, spoken to over stdio. */
export interface McpStdioSkillOptions extends McpSkillBase {
  command: string;
  args?: readonly string[];
  /** Variables added to the SDK's safe default environment (PATH, HOME...). */
  env?: Readonly<Record<string, string>>;
  cwd?: string;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpSkillOptions extends McpSkillBase {
  url: string | URL;
  /** Headers sent with every request (an `Authorization` header, for one). */
  headers?: Readonly<Record<string, string>>;
}

/** A server to mount: started as a command, or reached at a URL. */
export type McpSkillOptions = McpStdioSkillOptions | McpHttpSkillOptions;

/** The state the connection child shows in the inspector. */
export interface ConnectionContext {
  server: string;
  key: string;
  tools: number;
  /** The server process (stdio), once connected. */
  pid: number | null;
  error: string | null;
}

type ConnectionEvent =
  | { type: 'mcp.ready'; tools: number; pid: number | null; changed: boolean }
  | { type: 'mcp.tools'; tools: number }
  | { type: 'mcp.dropped'; error: string };

/** Makes MCP tool names valid, distinct action names (`^[a-zA-Z0-9_-]{1,64}$`). */
export function actionNames(tools: readonly string[]): Map<string, string> {
  const names = new Map<string, string>();
  const taken = new Set<string>([REFRESH_ACTION]);
  for (const tool of tools) {
    const base = tool.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'tool';
    let name = base;
    for (let n = 2; taken.has(name) || !ACTION_NAME.test(name); n++) name = `${base.slice(0, 60)}_${n}`;
    taken.add(name);
    names.set(tool, name);
  }
  return names;
}

export function addressOf(options: Pick<McpSkillBase, 'name'> & (Partial<McpStdioSkillOptions> | Partial<McpHttpSkillOptions>)): McpServerAddress {
  if ('command' in options && options.command !== undefined) {
    return { command: options.command, args: options.args ?? [], ...(options.env ? { env: options.env } : {}), ...(options.cwd ? { cwd: options.cwd } : {}) };
  }
  if ('url' in options && options.url !== undefined) return { url: options.url, ...(options.headers ? { headers: options.headers } : {}) };
  const name = String((options as { name?: unknown }).name);
  throw new DefinitionError({ code: 'invalid_skill', message: `mcpSkill '${name}' needs a command (stdio) or a url (HTTP)`, skill: name });
}

/** A tool result as the action's output: the structured content, else the text, else the content list. */
function outputOf(result: { content?: unknown; structuredContent?: unknown }): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const content = Array.isArray(result.content) ? (result.content as { type: string; text?: string }[]) : [];
  if (content.every((part) => part.type === 'text')) return content.map((part) => part.text ?? '').join('\n');
  return { content };
}

/** A tool's error result as an action failure; a skillstate server's typed error keeps its code. */
function toolError(tool: string, result: { content?: unknown; _meta?: Record<string, unknown> }) {
  const typed = result._meta?.[ERROR_META_KEY] as { code?: unknown; message?: unknown; details?: unknown } | undefined;
  if (typed && typeof typed.code === 'string' && typeof typed.message === 'string') {
    const details = typed.details && typeof typed.details === 'object' ? (typed.details as Record<string, unknown>) : {};
    // A remote action's failure keeps its own reason; its message loses the remote "action 'x' failed: " prefix.
    const reason = typed.code === 'action_failed' && typeof details.reason === 'string' ? details.reason : typed.code;
    return fail(reason, typed.message.replace(/^action '[^']*' failed: /, ''), { ...details, tool, remoteCode: typed.code });
  }
  const text = outputOf({ content: result.content });
  return fail('mcp_tool_error', `tool '${tool}' failed: ${typeof text === 'string' ? text : JSON.stringify(text)}`, { tool, content: result.content });
}

/**
 * Makes a skill of an MCP server: connects once to list its tools, then returns the skill.
 * Rejects with a `RuntimeError` (`mcp_unreachable`, `mcp_timeout`, `mcp_protocol_error`) when the
 * server cannot be reached, and `mcp_unauthorized` (`details.status`: 401 or 403) when it refuses
 * the credentials in `headers`.
 */
export async function mcpSkill(options: McpSkillOptions): Promise<AnySkill> {
  if (typeof options?.name !== 'string' || options.name === '') {
    throw new DefinitionError({ code: 'invalid_skill', message: `mcpSkill needs a 'name', the name of the skill the server's tools become, got ${options?.name === '' ? '""' : describeValue(options?.name)}`, subject: 'name' });
  }
  const address = addressOf(options);
  const limits: ConnectionLimits = {
    connectTimeout: options.connectTimeout ?? DEFAULT_LIMITS.connectTimeout,
    callTimeout: options.callTimeout ?? DEFAULT_LIMITS.callTimeout,
    maxOutputBytes: options.maxOutputBytes ?? DEFAULT_LIMITS.maxOutputBytes,
  };
  const probe = new McpConnection(options.name, address, limits);
  try {
    await probe.open();
  } catch (error) {
    const failure = error as McpFailure;
    throw new RuntimeError(mcpErrorInfo(failure, `mcpSkill '${options.name}': ${failure.message}`, { skill: options.name }));
  } finally {
    await probe.close();
  }
  return skillOf(options, address, limits, probe.tools);
}

/** A fingerprint of a tool list: equal lists need no remount. */
function toolsKey(tools: readonly Tool[]): string {
  return JSON.stringify(tools.map((tool) => [tool.name, tool.description ?? '', tool.inputSchema]));
}

/** Everything the skill's versions share: the connections and the connection logic. */
function skillOf(options: McpSkillOptions, address: McpServerAddress, limits: ConnectionLimits, tools: readonly Tool[]): AnySkill {
  /** Live connections by the child's systemId: an action finds its agent's connection there. */
  const connections = new Map<string, McpConnection>();
  const validator = new AjvJsonSchemaValidator();
  const server = describeAddress(address);
  let latest = toolsKey(tools);

  // The agent the connection runs under (child → lifecycle → agent): an item event sent to it
  // takes its turn in the agent's mailbox.
  const askRefresh = (self: unknown) =>
    grandparentOf(self)?.send({ type: 'run', instructions: [{ action: REFRESH_ACTION, params: {}, skill: options.name }] });

  const connectionLogic = setup({
    types: {} as { context: ConnectionContext; events: ConnectionEvent },
    actors: {
      session: fromCallback<ConnectionEvent, { key: string }>(({ input, sendBack }) => {
        let live = true;
        const send = (event: ConnectionEvent) => {
          if (live) sendBack(event);
        };
        const connection = new McpConnection(
          options.name,
          address,
          limits,
          {
            onDropped: (failure) => send({ type: 'mcp.dropped', error: failure.message }),
            onToolsChanged: (tools) => send({ type: 'mcp.tools', tools: tools.length }),
          },
          // An HTTP server that does not answer yet (one being restarted) is waited for.
          { waitForServer: true },
        );
        connections.set(input.key, connection);
        connection.open().then(
          () => send({ type: 'mcp.ready', tools: connection.tools.length, pid: connection.pid ?? null, changed: toolsKey(connection.tools) !== latest }),
          (error: unknown) => send({ type: 'mcp.dropped', error: error instanceof Error ? error.message : String(error) }),
        );
        return () => {
          live = false;
          if (connections.get(input.key) === connection) connections.delete(input.key);
          void connection.close();
        };
      }),
      crash: fromPromise<never, { error: string }>(async ({ input }) => {
        throw new Error(input.error);
      }),
    },
  }).createMachine({
    id: 'mcpConnection',
    context: ({ self }) => ({ server, key: (self as { systemId?: string }).systemId ?? self.id, tools: 0, pid: null, error: null }),
    invoke: { src: 'session', input: ({ context }) => ({ key: context.key }) },
    initial: 'connecting',
    states: {
      connecting: {
        on: {
          'mcp.ready': {
            target: 'ready',
            actions: [
              assign({ tools: ({ event }) => event.tools, pid: ({ event }) => event.pid, error: null }),
              ({ event, self }) => {
                if (event.changed) askRefresh(self);
              },
            ],
          },
          'mcp.dropped': { target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
        },
      },
      ready: {
        on: {
          'mcp.tools': { actions: [assign({ tools: ({ event }) => event.tools }), ({ self }) => askRefresh(self)] },
          'mcp.dropped': { target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
        },
      },
      // Shown, then the child errors: the skill's lifecycle restarts it or, past its budget, fails the skill.
      failed: { invoke: { src: 'crash', input: ({ context }) => ({ error: context.error ?? 'the connection failed' }) } },
    },
  });

  const connectionOf = (agentId: string, skill: string | undefined) => connections.get(childSystemId(agentId, skill ?? options.name, CONNECTION_CHILD));

  /** The skill for one version of the server's tool list. */
  const build = (tools: readonly Tool[]): AnySkill => {
    const key = toolsKey(tools);
    const names = actionNames(tools.map((tool) => tool.name));
    const actions: AnyAction[] = [];
    const llmTools: FunctionTool[] = [];
    for (const tool of tools) {
      const name = names.get(tool.name)!;
      const description = tool.description ?? tool.title ?? `The '${tool.name}' tool of MCP server '${options.name}'`;
      actions.push(toolAction(tool, name, description));
      llmTools.push({ type: 'function', function: { name, description, parameters: { ...(tool.inputSchema as JsonSchema) } } });
    }
    actions.push(
      defineAction({
        name: REFRESH_ACTION,
        description: `Remount '${options.name}' with the tools its MCP server offers now.`,
        input: z.object({}),
        run: (_params, ctx) => {
          const connection = connectionOf(ctx.agentId, ctx.skill);
          if (!connection || connection.state !== 'ready') return fail('mcp_unreachable', `MCP server '${options.name}' is not connected; its tools cannot be refreshed now`);
          const now = toolsKey(connection.tools);
          if (now === key) return { changed: false, tools: tools.map((tool) => tool.name) };
          latest = now;
          const before = new Set(tools.map((tool) => tool.name));
          const after = new Set(connection.tools.map((tool) => tool.name));
          const output = { changed: true, added: [...after].filter((name) => !before.has(name)), removed: [...before].filter((name) => !after.has(name)) };
          // Same name, same children: the agent keeps the skill's lifecycle and this connection running.
          return result(output, { unmount: [options.name], mount: [build(connection.tools)] });
        },
      }),
    );
    return defineSkill({
      name: options.name,
      description: options.description ?? `The tools of MCP server '${options.name}' (${server}).`,
      category: 'mcp',
      tags: ['mcp'],
      actions,
      tools: () => llmTools,
      metadata: { mcp: { server, tools: tools.map((tool) => tool.name) } },
      children: () => [
        {
          id: CONNECTION_CHILD,
          logic: connectionLogic,
          restart: options.restart ?? 'permanent',
          ...(options.maxRestarts === undefined ? {} : { maxRestarts: options.maxRestarts }),
          ...(options.withinMs === undefined ? {} : { withinMs: options.withinMs }),
        },
      ],
    });
  };

  /** One server tool as an action: arguments checked against its JSON Schema, then the call. */
  const toolAction = (tool: Tool, name: string, description: string): AnyAction => {
    let check: ((value: unknown) => string | undefined) | undefined;
    try {
      const validate = validator.getValidator(tool.inputSchema as never);
      check = (value) => {
        const outcome = validate(value);
        return outcome.valid ? undefined : outcome.errorMessage;
      };
    } catch {
      // A schema Ajv cannot compile is left to the server to enforce.
    }
    const input = z.looseObject({}).superRefine((value, ctx) => {
      const problem = check?.(value);
      if (problem) ctx.addIssue({ code: 'custom', message: `does not match the input schema of '${tool.name}': ${problem}` });
    });
    return defineAction({
      name,
      description,
      input,
      run: async (params, ctx) => {
        const connection = connectionOf(ctx.agentId, ctx.skill);
        // Just mounted (or restarting): wait for the connection rather than refuse the call.
        if (connection?.state === 'connecting') await connection.settled();
        if (!connection || connection.state !== 'ready') {
          return fail('mcp_unreachable', `MCP server '${options.name}' is not connected${connection ? ` (${connection.state})` : ''}; its connection is restarted by the skill's supervisor`);
        }
        if (!connection.tools.some((known) => known.name === tool.name)) {
          return fail('mcp_tool_removed', `MCP server '${options.name}' no longer offers tool '${tool.name}'`, { tool: tool.name });
        }
        try {
          const outcome = await connection.call(tool.name, params as Record<string, unknown>);
          return outcome.isError ? toolError(tool.name, outcome) : outputOf(outcome);
        } catch (error) {
          if (error instanceof McpFailure) return fail(error.reason, error.message, error.details);
          throw error;
        }
      },
    }) as AnyAction;
  };

  return build(tools);
}
