/**
 * `skillstate inspect`: starts the inspection server on its own and keeps it running until
 * interrupted. Applications stream to it with `startInspector({ connect })`; the local viewer
 * and the Stately inspector read it.
 */
import { startViewerServer, type ViewerServer, type ViewerServerOptions } from '../../viewer/server.js';
import { parseCommandArgs, UsageError, type CliIO, type Command } from '../io.js';

/** The options of the commands that start the inspection server. */
export const SERVER_OPTIONS = {
  port: { type: 'string', short: 'p' },
  host: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Their help text. */
export const SERVER_HELP = `Options:
  -p, --port N     port to listen on (default: a free one)
      --host H     interface to listen on (default 127.0.0.1: this machine only)
  -h, --help       this help`;

/** `--port` as a number; a usage error when it is not a port. */
export function portOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError(`--port must be a whole number from 0 to 65535, not '${value}'`);
  return port;
}

/** Starts the inspection server; what it refuses to start with (an empty --host, --interactive off loopback) is a usage mistake. */
export async function startServer(options: ViewerServerOptions): Promise<ViewerServer> {
  try {
    return await startViewerServer(options);
  } catch (error) {
    if (error instanceof TypeError) throw new UsageError(error.message);
    throw error;
  }
}

/** Prints where the viewers are, then waits for SIGINT or SIGTERM and stops the server. */
export async function serveUntilInterrupted(server: ViewerServer, io: CliIO, lines: string[]): Promise<number> {
  // Listened for before saying so: a Ctrl-C sent as soon as the line is read stops the server too.
  const interrupted = new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  io.out(`${[`Local viewer:      ${server.localUrl}`, `Stately inspector: ${server.statelyUrl} (needs the internet)`, ...lines].join('\n')}\nPress Ctrl-C to stop.\n`);
  await interrupted;
  await server.stop();
  return 0;
}

/** `skillstate inspect`. */
export const inspectCommand: Command = {
  name: 'inspect',
  help: `Usage: skillstate inspect [--port N] [--host H] [--interactive]

Starts the inspection server and prints the pages to open: the local viewer (state diagrams of
every agent and skill lifecycle, the event log; works offline) and the Stately inspector.
Stream an application to it with:

  createAgentSystem({ inspect: (await startInspector({ connect: '<socket URL>' })).inspect })

With --interactive (loopback only), the local viewer may also steer the applications that opt in
with startInspector({ connect, interactive: true }) and inspector.attach(system): its printed
address carries the session token every steering request must send.

${SERVER_HELP}
      --interactive    let the local viewer steer applications that opt in`,
  async run(args, io) {
    const { values } = parseCommandArgs({ args, options: { ...SERVER_OPTIONS, interactive: { type: 'boolean' } } });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    const server = await startServer({ host: values.host, port: portOf(values.port), home: 'local', title: 'skillstate inspect', interactive: values.interactive === true });
    const connect = `startInspector({ connect: '${server.socketUrl}'${values.interactive ? ', interactive: true' : ''} })`;
    return serveUntilInterrupted(server, io, [`Application socket: ${server.socketUrl}  (${connect})`]);
  },
};
