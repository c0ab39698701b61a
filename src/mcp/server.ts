/**
 * One MCP server session over a running agent: `createMcpServer(target, options)` returns the
 * SDK's `Server` with the agent's tools, the document skills (as resources and under MCP's Skills
 * extension, `io.modelcontextprotocol/skills`, with `directoryRead`) and the disclosure prompt
 * wired in. Connect it to any transport; `serveMcp` does that for stdio and Streamable HTTP.
 *
 * The tool list is read from the agent on every `tools/list`, so it is always the agent's current
 * one. The server watches the agent's actor: when a step changes the toolset (a skill mounted or
 * unmounted, `load_skill` included), the client gets `notifications/tools/list_changed`.
 *
 * Once the agent has stopped (`ref.stop()`, a `stop` effect, its system shut down), the server
 * has nothing left to serve: the client gets `notifications/tools/list_changed` (the tools are
 * gone), and every request but `initialize` and `ping` is answered with a JSON-RPC error
 * (`AGENT_STOPPED_ERROR`) naming the agent, with the `agent_stopped` error as its `data`. The
 * session stays open, so that a client learns why rather than finding a closed connection.
 *
 * It uses the SDK's low-level `Server` rather than `McpServer.registerTool`: the tools are the
 * agent's, they change while it runs, and their input schemas are JSON Schemas already, checked
 * by the agent's own pipeline with its own typed errors.
 *
 * Must never write to stdout (stdio servers speak the protocol there).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  ErrorCode,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import type { DiagnosticListener } from '../core/diagnostics.js';
import { errorInfo } from '../core/errors.js';
import { describeValue } from '../core/plain.js';
import type { Toolset } from '../core/toolset.js';
import { RuntimeError, type AgentRef, type AgentSystem, type DocumentSkillRegistry } from '../index.js';
import { DISCLOSURE_PROMPT, DISCLOSURE_PROMPT_INFO, disclosurePrompt, listSkillResources, readSkillUri, SKILL_RESOURCE_TEMPLATE } from './documents.js';
import { servedToolCall } from './mcp-spans.js';
import { watchAgent, watchAgentId, type AgentWatch, type AgentWatchListener } from './agent-watch.js';
import { protocolError } from './protocol-error.js';
import { handleRequest } from './request-handler.js';
import { SkillCatalog, SKILLS_EXTENSION } from './skill-catalog.js';
import { serveSkillsExtension } from './skills-methods.js';
import { callAgentTool, mcpTools, toolListKey } from './tools.js';

/**
 * The JSON-RPC error code of a request refused because the served agent has stopped: one of the
 * codes JSON-RPC leaves to servers (-32000 to -32099), apart from those the MCP SDK and the MCP
 * specification use (-32000 connection closed, -32001 request timeout, -32002 resource not found).
 */
export const AGENT_STOPPED_ERROR = -32003;

/** What `serveMcp` and `createMcpServer` serve: a running agent, or a system and an agent id. */
export type McpTarget = AgentRef<object> | { system: AgentSystem; id: string };

/** How an MCP server session presents the agent. */
export interface McpServerOptions {
  /** The server's name in the MCP handshake (default: the agent's definition name). */
  name?: string;
  /** The server's version in the handshake (default `0.0.0`). */
  version?: string;
  /** Instructions the client may show its model (default: none). */
  instructions?: string;
  /**
   * Document skills to offer as resources, under the Skills extension and as the disclosure
   * prompt. Without it, none of these is offered.
   */
  registry?: DocumentSkillRegistry;
  /** Milliseconds a tool call may take (default: the agent system's call timeout). */
  callTimeout?: number;
  /**
   * Receives a diagnostic for each skill of the registry left out of the extension and the
   * resources (invalid, untrusted, over the extension's limits), once per skill and reason, and,
   * from `serveMcp`, one when the agent stops while served (`mcp_agent_stopped`) (default: a
   * line on stderr).
   */
  onDiagnostic?: DiagnosticListener;
}

/** Whether a target is a ref (served for good) rather than `{ system, id }` (whichever agent runs under the id). */
export function isAgentRef(target: McpTarget): target is AgentRef<object> {
  return typeof (target as Partial<AgentRef<object>> | undefined)?.callTool === 'function';
}

/** The agent a target names; throws `unknown_agent` when a system has no such agent. */
export function resolveTarget(target: McpTarget): AgentRef<object> {
  if (isAgentRef(target)) return target;
  if (typeof (target as Partial<{ system: AgentSystem }> | undefined)?.system?.get !== 'function' || typeof target.id !== 'string') {
    throw new RuntimeError({ code: 'invalid_options', message: `MCP serves a running agent: give its ref (what system.spawn returns) or { system, id }, got ${describeValue(target)}`, subject: 'target', details: { option: 'target', value: describeValue(target) } });
  }
  const ref = target.system.get(target.id);
  if (!ref) throw new RuntimeError({ code: 'unknown_agent', message: `no agent '${target.id}' to serve over MCP; running agents: ${target.system.list().map((agent) => agent.id).join(', ') || '(none)'}`, subject: target.id });
  return ref;
}

/** A watch of what a target names, and the ref it names now. */
export type TargetWatch = AgentWatch & { current(): AgentRef<object> };

/**
 * Follows what `target` names from `first` on (`resolveTarget`'s answer, or the ref last
 * followed): a ref is that agent for good; `{ system, id }` is whichever agent runs under the id,
 * the next one followed once the last stopped.
 */
export function followTarget(target: McpTarget, first: AgentRef<object>, on: AgentWatchListener): TargetWatch {
  if (isAgentRef(target)) {
    const watch = watchAgent(first, on);
    return { current: () => first, close: () => watch.close() };
  }
  return watchAgentId(target, first, on);
}

/**
 * An MCP server session for the agent. Closing the server stops watching the agent; the agent
 * itself keeps running (it belongs to its system).
 *
 * Given a ref, the session serves that agent, and once it stops, refuses every request. Given
 * `{ system, id }`, it serves whichever agent runs under the id: once one stops, an agent spawned
 * (or restored) later under the same id is served (its clients are told the tool list changed).
 */
export function createMcpServer(target: McpTarget, options: McpServerOptions = {}): Server {
  return createSessionServer(target, resolveTarget(target), options);
}

/** `createMcpServer`, following `target` from `first` on (for `serveMcp`, the ref its endpoint follows now). */
export function createSessionServer(target: McpTarget, first: AgentRef<object>, options: McpServerOptions): Server {
  const { registry } = options;
  const capabilities: ServerCapabilities = { tools: { listChanged: true } };
  if (registry) {
    capabilities.resources = {};
    capabilities.prompts = {};
    capabilities.extensions = { [SKILLS_EXTENSION]: { directoryRead: true } };
  }
  const server = new Server(
    { name: options.name ?? first.definition, version: options.version ?? '0.0.0' },
    options.instructions === undefined ? { capabilities } : { capabilities, instructions: options.instructions },
  );

  let toolset: Toolset | undefined;
  let listed: string | undefined;
  let watch: TargetWatch | undefined;
  /** The agent served now (`first` until the watch is made: it may be told of a step as it is made). */
  const served = () => watch?.current() ?? first;
  watch = followTarget(target, first, {
    step: () => {
      const ref = served();
      // The toolset is rebuilt only when the agent's skills change: most steps stop at this check.
      const current = ref.toolset();
      if (current === toolset) return;
      toolset = current;
      const key = toolListKey(mcpTools(ref));
      if (key === listed) return;
      listed = key;
      if (server.transport) server.sendToolListChanged().catch(() => {});
    },
    // Its tools are gone (a passivated agent is not stopped: it is served again once woken).
    stopped: () => {
      toolset = undefined;
      listed = undefined;
      if (server.transport) server.sendToolListChanged().catch(() => {});
    },
  });
  if (first.status !== 'stopped') {
    toolset = first.toolset();
    listed = toolListKey(mcpTools(first));
  }
  refuseOnceStopped(server, served);
  const previousClose = server.onclose;
  server.onclose = () => {
    watch.close();
    previousClose?.();
  };

  handleRequest(server, ListToolsRequestSchema, () => {
    const tools = mcpTools(served());
    listed = toolListKey(tools);
    return { tools };
  });
  handleRequest(server, CallToolRequestSchema, (request) =>
    servedToolCall(request.params.name, request.params._meta, () => callAgentTool(served(), request.params.name, request.params.arguments, options.callTimeout)),
  );

  if (registry) {
    const catalog = new SkillCatalog(registry, options.onDiagnostic);
    serveSkillsExtension(server, catalog);
    handleRequest(server, ListResourcesRequestSchema, async () => ({ resources: await listSkillResources(catalog) }));
    handleRequest(server, ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [SKILL_RESOURCE_TEMPLATE] }));
    handleRequest(server, ReadResourceRequestSchema, (request) => readSkillUri(catalog, request.params.uri));
    handleRequest(server, ListPromptsRequestSchema, () => ({ prompts: [DISCLOSURE_PROMPT_INFO] }));
    handleRequest(server, GetPromptRequestSchema, (request) => {
      if (request.params.name !== DISCLOSURE_PROMPT) {
        throw protocolError(ErrorCode.InvalidParams, `no prompt named '${request.params.name}'; the prompt is '${DISCLOSURE_PROMPT}'`);
      }
      return disclosurePrompt(registry, request.params.arguments?.query);
    });
  }
  return server;
}

/**
 * Makes every request handler registered on `server` from now on (every method but the SDK's own
 * `initialize` and `ping`) refuse while the agent served (`served()`) has stopped, with a JSON-RPC
 * error naming it.
 */
function refuseOnceStopped(server: Server, served: () => AgentRef<object>): void {
  type Register = Server['setRequestHandler'];
  const register = server.setRequestHandler.bind(server) as (schema: Parameters<Register>[0], handler: Parameters<Register>[1]) => void;
  server.setRequestHandler = ((schema: Parameters<Register>[0], handler: Parameters<Register>[1]) =>
    register(schema, (request, extra) => {
      const ref = served();
      if (ref.status === 'stopped') {
        const info = errorInfo('agent_stopped', `agent '${ref.id}' has stopped: this MCP server no longer serves it (its tools, resources and prompts are gone); connect to a server of a running agent`, { subject: ref.id });
        throw protocolError(AGENT_STOPPED_ERROR, info.message, info);
      }
      return handler(request, extra);
    })) as Register;
}
