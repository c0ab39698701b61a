/**
 * The `skillstate` command line: dispatches to the commands (`validate`, `list`, `disclose`,
 * `read`, `run`), prints help, and turns every error into a message on stderr and a non-zero exit
 * code. `main(argv)` returns the exit code; `bin/skillstate.js` sets it.
 *
 * I/O: through the commands.
 */
import { SkillstateError } from '../core/errors.js';
import { discloseCommand } from './commands/disclose.js';
import { listCommand } from './commands/list.js';
import { mcpCommand } from './commands/mcp.js';
import { readCommand } from './commands/read.js';
import { runCommand } from './commands/run.js';
import { validateCommand } from './commands/validate.js';
import { processIO, UsageError, type CliIO, type Command } from './io.js';

export const COMMANDS: readonly Command[] = [validateCommand, listCommand, discloseCommand, readCommand, runCommand, mcpCommand];

export function usage(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  return `Usage: skillstate <command> [options]

Document skills (SKILL.md folders): validate, discover, disclose, read and run them, and serve
them over MCP.

Commands:
${COMMANDS.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`).join('\n')}

Run 'skillstate <command> --help' for a command's options.
`;
}

/** Runs the command line; returns the exit code (0 ok, 1 failure, 2 usage error). */
export async function main(argv: readonly string[], io: CliIO = processIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(usage());
    return name === undefined ? 2 : 0;
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
