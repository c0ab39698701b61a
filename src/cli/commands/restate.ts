/**
 * `skillstate restate dev`: runs agent definitions on the Restate host on this machine — a local
 * Restate server on free ports of 127.0.0.1 with its data in a temporary folder (or `--data`),
 * the agents served by this process, the deployment registered — and prints where to send
 * signals. Stops everything on Ctrl-C.
 *
 * The Restate SDK and server packages are imported only when this command runs.
 */
import type { AgentDefinition } from '../../core/agent-definition.js';
import { SkillstateError } from '../../core/errors.js';
import { parseCommandArgs, UsageError, type Command } from '../io.js';
import type { ChatModel } from '../../model/models.js';
import { loadAgentDefinition, loadExport } from './mcp.js';

/** An object of AI SDK language models by name. */
function isModelMap(value: unknown): value is Record<string, ChatModel> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const models = Object.values(value);
  return models.length > 0 && models.every((model) => typeof model === 'object' && model !== null && typeof (model as { doGenerate?: unknown }).doGenerate === 'function');
}

export const restateCommand: Command = {
  name: 'restate',
  help: `Usage: skillstate restate dev --agent <module:Export> [--agent ...] [options]

Starts a local Restate server on free ports of 127.0.0.1 (data in a temporary folder unless
--data is given), serves the agent definitions from this process, registers them with the
server, and prints the ingress URL to send signals to. Ctrl-C stops both.

  --agent <module:Export>  an agent definition to serve (a .js module, or a .ts one, which needs
                           tsx: npm install tsx; default export when no name is given); repeat
                           for several
  --models <module:Export> the language models of model-driven agents: an object of AI SDK
                           models by name, e.g. export const models = { default: openai('gpt-4.1') }
  --data <folder>          keep the server's data here (kept after exit; reused on the next run)
  --port <port>            the port the agents are served on (default: any free port)

Needs the packages @restatedev/restate-sdk and @restatedev/restate-server.`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs({
      args,
      allowPositionals: true,
      options: { help: { type: 'boolean', short: 'h' }, agent: { type: 'string', multiple: true }, models: { type: 'string' }, data: { type: 'string' }, port: { type: 'string' } },
    });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    if (positionals.length !== 1 || positionals[0] !== 'dev') throw new UsageError(`restate: the one subcommand is 'dev', not '${positionals.join(' ')}'`);
    if (!values.agent?.length) throw new UsageError('restate dev needs at least one --agent <module:Export>');
    const port = values.port === undefined ? 0 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError(`--port must be a port number, not '${values.port}'`);
    const definitions: AgentDefinition<object>[] = [];
    for (const spec of values.agent) definitions.push(await loadAgentDefinition(spec));
    const models = values.models === undefined ? undefined : await loadExport('--models', values.models, { one: 'object of language models', many: 'objects of language models' }, isModelMap);

    let restate: typeof import('../../restate/index.js');
    try {
      restate = await import('../../restate/index.js');
    } catch (error) {
      // The SDK missing is said by the import itself, with what to install: said once, with the server.
      const missing = error instanceof SkillstateError && error.code === 'invalid_options' && (error.details as { reason?: unknown } | undefined)?.reason === 'peer_missing';
      io.err(
        missing
          ? `skillstate restate: ${error.message}; 'restate dev' also needs the Restate server: run 'npm install @restatedev/restate-sdk @restatedev/restate-server'\n`
          : `skillstate restate: cannot load the Restate SDK (run 'npm install @restatedev/restate-sdk @restatedev/restate-server'): ${error instanceof Error ? error.message : String(error)}\n`,
      );
      return 1;
    }
    const server = await restate.startRestateServer(values.data === undefined ? {} : { dataDir: values.data });
    const service = await restate.serveRestateAgents({ definitions, port, ...(models ? { models } : {}) });
    try {
      await server.register(service.uri);
    } catch (error) {
      await service.close();
      await server.close();
      throw error;
    }
    const first = definitions[0]!.name;
    // Listened for before the addresses are said: a Ctrl-C sent as soon as they are read stops both too.
    const interrupted = new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    io.out(
      `Restate ingress: ${server.ingressUrl}\n` +
        `Restate admin:   ${server.adminUrl}\n` +
        `Agents served:   ${definitions.map((definition) => definition.name).join(', ')} (at ${service.uri})\n` +
        (models ? `Models:          ${Object.keys(models).join(', ')}\n` : '') +
        `Data folder:     ${server.dataDir}\n\n` +
        `From code:  connectRestate('${server.ingressUrl}').spawn('${first}', { id: 'a1' })\n` +
        `With curl:  curl -X POST ${server.ingressUrl}/${first}/a1/spawn -H 'content-type: application/json' -d '{}'\n` +
        `            curl -X POST ${server.ingressUrl}/${first}/a1/call -H 'content-type: application/json' \\\n` +
        `              -d '{"specversion":"1.0","id":"s1","source":"curl","type":"<signal type>","time":"${new Date(0).toISOString()}","data":{}}'\n`,
    );
    await interrupted;
    await service.close();
    await server.close();
    return 0;
  },
};
