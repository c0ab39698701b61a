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
import { SkillstateError } from '../core/errors.js';
import { discloseCommand } from './commands/disclose.js';
import { initCommand } from './commands/init.js';
import { trustCommand } from './commands/trust.js';
import { inspectCommand } from './commands/inspect.js';
import { listCommand } from './commands/list.js';
import { chatCommand } from './commands/chat.js';
import { restateCommand } from './commands/restate.js';
import { mcpCommand } from './commands/mcp.js';
import { readCommand } from './commands/read.js';
import { runCommand } from './commands/run.js';
import { traceCommand } from './commands/trace.js';
import { validateCommand } from './commands/validate.js';
import { processIO, UsageError, type CliIO, type Command } from './io.js';

/** The CLI commands, in the order `skillstate --help` lists them. */
export const COMMANDS: readonly Command[] = [validateCommand, listCommand, discloseCommand, readCommand, runCommand, initCommand, trustCommand, inspectCommand, traceCommand, mcpCommand, chatCommand, restateCommand];

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
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  return `Usage: skillstate <command> [options]

Document skills (SKILL.md folders): create, validate, discover, disclose, read, run and trust them,
and serve them over MCP; chat with a model that uses them. Agents: watch them live (inspect) or
after the fact (trace view).

Commands:
${COMMANDS.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`).join('\n')}

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
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (!command) {
    io.err(`skillstate: unknown command '${name}'\n\n${usage()}`);
    return 2;
  }
  try {
    return await command.run(rest, io);
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
