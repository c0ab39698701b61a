/**
 * The `skillstate` command line: dispatches to the commands (`validate`, `list`, `disclose`,
 * `read`, `run`, `init`, `trust`, `inspect`, `trace`), prints help and the version, and turns every
 * error into a message on stderr and a non-zero exit code. `main(argv)` returns the exit code;
 * `bin/skillstate.js` sets it.
 *
 * I/O: reads the package's package.json for `--version`; the rest through the commands.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { closestName, didYouMean } from '../core/closest-name.js';
import { SkillstateError } from '../core/errors.js';
import { processIO, UsageError, type CliIO, type Command } from './io.js';

/**
 * The CLI commands, in the order `skillstate --help` lists them, each with its summary. The
 * command `<name>` is `<name>Command` of `./commands/<name>.js`, imported only when it runs: a
 * command that serves MCP or talks to a model does not make `skillstate list` pay for loading the
 * MCP SDK or the model loop.
 */
const COMMAND_LIST = `
  validate  check skill folders strictly against the Agent Skills specification
  list      list discovered skills, shadowed duplicates and warnings
  disclose  show the tier and the exact prompt text for a query
  read      print one file of a skill (a path relative to the skill's root, or absolute inside it)
  run       run a skill's script (no shell, time and output limits)
  init      create a new skill folder with a valid SKILL.md
  trust     trust project skills so their tools load and their scripts run
  inspect   serve the local viewer and the Stately inspector for a running application
  trace     view a recorded trace (trace view trace.jsonl) in the local viewer
  mcp       serve the skills (or an agent) to MCP clients, over stdio or HTTP
  chat      talk with a model that uses the discovered skills (streamed, tools shown)
  restate   run agents on a local Restate server (durable, across processes)
`;

/** The names of the CLI commands, in the order `skillstate --help` lists them. */
export const COMMAND_NAMES: readonly string[] = COMMAND_LIST.trim()
  .split('\n')
  .map((line) => line.trim().split(' ', 1)[0]!);

/** The command named `name` (one of `COMMAND_NAMES`), its module imported now. */
export async function loadCommand(name: string): Promise<Command> {
  const specifier = `./commands/${name}.js`;
  const module = (await import(/* @vite-ignore */ specifier)) as Record<string, Command | undefined>;
  const command = module[`${name}Command`];
  if (!command) throw new Error(`the module of command '${name}' does not export ${name}Command`);
  return command;
}

/** skillstate's version, from the package.json above this file (the sources or the build). */
export function packageVersion(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const data = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (data.name === 'skillstate' && typeof data.version === 'string') return data.version;
    }
    if (path.dirname(dir) === dir) return 'unknown';
  }
}

/** The CLI usage text. */
export function usage(): string {
  return `Usage: skillstate <command> [options]

Document skills (SKILL.md folders): create, validate, discover, disclose, read, run and trust them,
and serve them over MCP; chat with a model that uses them. Agents: watch them live (inspect) or
after the fact (trace view).

Commands:${COMMAND_LIST}
Run 'skillstate <command> --help' for a command's options; 'skillstate --version' for the version.

Exit codes: 0 success, 1 failure, 2 a usage mistake. An error of skillstate's ends with its stable
code in brackets, the one a program matches on: "no skill named 'x'; available: ... [skill_not_found]".
`;
}

/** Runs the command line; returns the exit code (0 ok, 1 failure, 2 usage error). */
export async function main(argv: readonly string[], io: CliIO = processIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(usage());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    io.out(`${packageVersion()}\n`);
    return 0;
  }
  if (!COMMAND_NAMES.includes(name)) {
    io.err(`skillstate: unknown command '${name}'${didYouMean(closestName(name, COMMAND_NAMES))}\n\n${usage()}`);
    return 2;
  }
  try {
    return await (await loadCommand(name)).run(rest, io);
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))) {
      io.err(`skillstate ${name}: ${error.message}\nRun 'skillstate ${name} --help' for usage.\n`);
      return 2;
    }
    if (error instanceof SkillstateError) {
      io.err(`skillstate ${name}: ${error.message} [${error.code}]\n`);
      return 1;
    }
    io.err(`skillstate ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
