/**
 * `skillstate mcp`: serves an agent over MCP, on stdio (the default: what hosts such as Claude
 * Code spawn) or on Streamable HTTP (`--http PORT`).
 *
 * The agent is made of the discovered document skills: the `load_skill`, `list_skills` and
 * `read_skill_resource` tools, and each skill's toolset once it is loaded (clients are told the
 * tool list changed). `--agent module.ts:Export` serves an agent definition of the user's instead;
 * the discovered skills are still offered as resources and as the disclosure prompt.
 *
 * On stdio, stdout carries the protocol only: `console.log` and friends are sent to stderr.
 * The system is the command's own: once its agent stops, nothing can run it again, so the command
 * answers the requests under way, says why on stderr and exits with 1.
 * The SDK is imported only when this command runs.
 */
import { Console } from 'node:console';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { defineAgent, type AgentDefinition } from '../../core/agent-definition.js';
import type { Diagnostic } from '../../core/diagnostics.js';
import { errorInfo, SkillstateError } from '../../core/errors.js';
import { createSkillTools } from '../../manifest/skill-tools.js';
import { loadTsx, TsxMissingError } from '../../manifest/toolsets.js';
import { createAgentSystem } from '../../system.js';
import { parseCommandArgs, UsageError, type CliIO, type Command } from '../io.js';
import { discoverFromFlags, SOURCE_HELP, SOURCE_OPTIONS } from '../sources.js';

function isAgentDefinition(value: unknown): value is AgentDefinition<object> {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'agent' && typeof (value as { spawn?: unknown; new?: unknown }).new === 'function';
}

/**
 * Imports the user's module. TypeScript goes through tsx registered for the whole process (not
 * `tsImport`, which gives the module private copies of its imports): the definition must come
 * from the same `skillstate` this command runs, or its agents would not be recognised.
 */
async function importModule(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(path.resolve(file)).href;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (error) {
    // TypeScript, and tsx not yet registered (the installed command runs its JavaScript build).
    if ((error as { code?: unknown }).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error;
    (await loadTsx(file, 'module')).register();
    // The failed load is cached under the plain URL: ask again under another.
    return (await import(`${url}?typescript`)) as Record<string, unknown>;
  }
}

/**
 * Loads `module.ts:Export` (the default export when no name is given) for the command-line flag
 * `flag`, and checks it is `what` (`is`); the error names the exports that are.
 */
export async function loadExport<T>(flag: string, spec: string, what: { one: string; many: string }, is: (value: unknown) => value is T): Promise<T> {
  const colon = spec.lastIndexOf(':');
  // A Windows drive letter (C:\...) is not an export separator.
  const hasExport = colon > 1;
  const file = hasExport ? spec.slice(0, colon) : spec;
  const name = hasExport ? spec.slice(colon + 1) : 'default';
  let module: Record<string, unknown>;
  try {
    module = await importModule(file);
  } catch (error) {
    if (error instanceof TsxMissingError) {
      // Not a usage mistake: the module is fine, this installation lacks tsx. Said as toolsets say it.
      throw new SkillstateError(errorInfo('invalid_options', `${flag}: cannot import '${file}': ${error.message}`, { subject: file, details: { reason: 'tsx_missing' } }), { cause: error });
    }
    throw new UsageError(`${flag}: cannot import '${file}': ${error instanceof Error ? error.message : String(error)}`);
  }
  const exported = module[name];
  if (!is(exported)) {
    const names = Object.keys(module).filter((key) => is(module[key]));
    throw new UsageError(`${flag}: '${file}' exports no ${what.one} named '${name}'${names.length ? `; ${what.many} there: ${names.join(', ')}` : ''}`);
  }
  return exported;
}

/** Loads `module.ts:Export` (default export when no name is given) and checks it is an agent definition. */
export function loadAgentDefinition(spec: string): Promise<AgentDefinition<object>> {
  return loadExport('--agent', spec, { one: 'agent definition', many: 'agent definitions' }, isAgentDefinition);
}

function portOf(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError(`--http must be a port number (0 lets the system choose), not '${value}'`);
  return port;
}

/**
 * Sends everything a program prints with `console` (`log`, `dir`, `table`, `timeEnd`, `count`,
 * `group`...) to stderr, formatted as `console` formats it, so stdout stays the protocol's.
 */
function consoleToStderr(io: CliIO): void {
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      io.err(chunk.toString());
      done();
    },
  });
  const toStderr = new Console({ stdout: stream, stderr: stream });
  const methods = console as unknown as Record<string, unknown>;
  const replacements = toStderr as unknown as Record<string, unknown>;
  for (const name of Object.keys(methods)) {
    const replacement = replacements[name];
    if (typeof methods[name] === 'function' && typeof replacement === 'function') methods[name] = replacement.bind(toStderr);
  }
}

export const mcpCommand: Command = {
  name: 'mcp',
  help: `Usage: skillstate mcp [options] [sources]

Serves an agent over the Model Context Protocol. By default the agent is made of the discovered
document skills: load_skill, list_skills and read_skill_resource, and each skill's tools once it is
loaded. Skills are also offered as resources (skill://<name>/SKILL.md, skill://<name>/<file>, each
file whole), under MCP's Skills extension (skills/list, skills/get, resources/directory/read), and
the disclosure as the prompt 'skills'. A skill that breaks the Agent Skills specification, an
untrusted project skill, or one over the extension's limits is left out of those, with a warning.

  --agent <module:Export>  serve this agent definition instead (a .js module, or a .ts one, which
                           on Node older than 22.18 needs tsx: npm install tsx; default export
                           when no name is given)
  --http <port>            serve Streamable HTTP on this port (0: any free port) instead of stdio
  --host <address>         address to bind with --http (default 127.0.0.1)
  --token <secret>         with --http, require 'Authorization: Bearer <secret>'
                           (default: the SKILLSTATE_MCP_TOKEN environment variable, if set)
  --stateless              with --http, no sessions: each request is answered on its own
  --timeout <ms>           longest a tool call may take (default 60000)

When the agent stops (an action of it returns a stop effect), nothing can start it again in this
server: it answers the requests under way, says so on stderr and exits with code 1.

Add it to a host, for example:
  claude mcp add skills -- npx skillstate mcp --path ./skills

${SOURCE_HELP}`,
  async run(args, io) {
    const { values } = parseCommandArgs({
      args,
      options: {
        ...SOURCE_OPTIONS,
        agent: { type: 'string' },
        http: { type: 'string' },
        host: { type: 'string' },
        token: { type: 'string' },
        stateless: { type: 'boolean' },
        timeout: { type: 'string' },
      },
    });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    const http = values.http === undefined ? undefined : portOf(values.http);
    if (http === undefined && (values.host !== undefined || values.token !== undefined || values.stateless)) {
      throw new UsageError('--host, --token and --stateless apply to --http only');
    }
    const timeout = values.timeout === undefined ? 60_000 : Number(values.timeout);
    if (!Number.isInteger(timeout) || timeout <= 0) throw new UsageError(`--timeout must be a positive whole number of milliseconds, not '${values.timeout}'`);
    if (http === undefined) consoleToStderr(io);

    const { serveMcp } = await import('../../mcp/index.js');
    const registry = await discoverFromFlags(values, io);
    const definition = values.agent
      ? await loadAgentDefinition(values.agent)
      : defineAgent({ name: 'skills', skills: [createSkillTools(registry)], registry });
    const system = createAgentSystem({ callTimeout: timeout, resolvers: [registry] });
    const agent = system.spawn(definition, { id: definition.name });
    // The command says itself, below, that the agent stopped and why it exits.
    const onDiagnostic = (note: Diagnostic) => {
      if (note.code !== 'mcp_agent_stopped') io.err(`skillstate: ${note.level}: ${note.message}\n`);
    };
    // The system is this command's own: nothing will run an agent under that id again.
    const shared = { registry, callTimeout: timeout, name: definition.name, onDiagnostic, whenStopped: 'close' as const };
    const endpoint =
      http === undefined
        ? await serveMcp(agent, { ...shared, transport: 'stdio' })
        : await serveMcp(agent, {
            ...shared,
            transport: 'http',
            port: http,
            host: values.host,
            token: values.token ?? process.env.SKILLSTATE_MCP_TOKEN,
            stateless: values.stateless === true,
          });
    // Listened for before the address is said: a Ctrl-C sent as soon as it is read closes the server too.
    const stop = () => void endpoint.close();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    if (endpoint.url) io.err(`skillstate mcp: serving agent '${definition.name}' at ${endpoint.url}\n`);
    await endpoint.closed;
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    const stopped = agent.status === 'stopped';
    if (stopped) io.err(`skillstate mcp: agent '${agent.id}' has stopped, and nothing in this server can start it again: the server exits, having answered the requests under way (start the command again to serve a new one)\n`);
    await system.shutdown();
    return stopped ? 1 : 0;
  },
};
