/**
 * `skillstate trace view <file>`: serves a recorded JSON-lines trace to the local viewer (and
 * the Stately inspector), drawn with the package's own machine definitions, for post-mortems.
 */
import { readFile, stat } from 'node:fs/promises';
import { agentMachine } from '../../../machines/agent.js';
import { skillLifecycleMachine } from '../../../machines/skill-lifecycle.js';
import { toPlain } from '../../viewer/messages.js';
import { parseCommandArgs, UsageError, type Command } from '../io.js';
import { parseTrace, TraceError, traceToMessages, withoutCutShortLine } from '../trace-replay.js';
import { portOf, serveUntilInterrupted, SERVER_HELP, SERVER_OPTIONS, startServer } from './inspect.js';

/** The largest trace `trace view` reads: it holds the whole file, and its messages, in memory. */
const MAX_TRACE_BYTES = 256 * 1024 * 1024;

/** The size of the trace file, or a usage error saying what `file` is instead of one. */
async function traceSize(file: string): Promise<number> {
  const found = await stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') throw new UsageError(`no file ${file}: name a trace written by createAgentSystem({ trace: 'trace.jsonl' })`);
    throw error;
  });
  if (!found.isFile()) throw new UsageError(`${file} is not a file: name a trace written by createAgentSystem({ trace: 'trace.jsonl' })`);
  return found.size;
}

/** `skillstate trace view`. */
export const traceCommand: Command = {
  name: 'trace',
  help: `Usage: skillstate trace view <trace.jsonl> [--port N] [--host H]

Serves a trace written by createAgentSystem({ trace: 'trace.jsonl' }) to the local viewer: every
agent and skill lifecycle with its state diagram (at its last state), and the event log with
filters by agent and skill. Works offline.

${SERVER_HELP}`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs({ args, options: SERVER_OPTIONS, allowPositionals: true });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    const [action, file, ...extra] = positionals;
    if (action !== 'view') throw new UsageError(action === undefined ? 'say what to do: trace view <trace.jsonl>' : `unknown action '${action}' (only 'view')`);
    if (file === undefined) throw new UsageError('name the trace file: trace view <trace.jsonl>');
    if (extra.length) throw new UsageError(`one trace file at a time (also given: ${extra.join(' ')})`);
    const size = await traceSize(file);
    if (size > MAX_TRACE_BYTES) {
      throw new TraceError({ code: 'invalid_trace', message: `${file} is ${size} bytes; trace view reads traces of up to ${MAX_TRACE_BYTES} bytes (keep the part you need, e.g. with tail -n)`, subject: file });
    }
    const { text, cutShort } = withoutCutShortLine(await readFile(file, 'utf8'));
    if (cutShort !== undefined) io.err(`note: ${file}, line ${cutShort} is cut short (its writer stopped mid-line) and was left out\n`);
    const lines = parseTrace(text, file);
    const machines = { agent: JSON.stringify(toPlain(agentMachine.config)), lifecycle: JSON.stringify(toPlain(skillLifecycleMachine.config)) };
    const messages = traceToMessages(lines, machines);
    const server = await startServer({ host: values.host, port: portOf(values.port), home: 'local', title: `trace ${file}`, messages, history: Math.max(1_000, messages.length) });
    return serveUntilInterrupted(server, io, [`${lines.length} trace lines from ${file}`]);
  },
};
