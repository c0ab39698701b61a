/**
 * `skillstate run <skill> <script> [args...]`: runs a skill's script under the script limits and
 * passes its output through. The exit code is the script's (124 after a time-out).
 */
import { constants as osConstants } from 'node:os';
import { DEFAULT_SCRIPT_TIMEOUT_MS, MAX_SCRIPT_TIMEOUT_MS, runSkillScript, scriptLimitProblem } from '../../manifest/scripts.js';
import { parseCommandArgs, UsageError, type Command } from '../io.js';
import { discoverFromFlags, SOURCE_HELP, SOURCE_OPTIONS } from '../sources.js';

export const runCommand: Command = {
  name: 'run',
  help: `Usage: skillstate run [--timeout ms] [sources] <skill> <script> [args...]

Runs a script of a skill: a name its manifest declares under 'scripts', or a path relative to its
root. No shell; working directory the skill's root; interpreter from the extension (.sh, .py,
.js, .mjs, .ts) or the #! line; a scrubbed environment; at most 100 arguments and 4096 argument
bytes; killed after the timeout (default 60000 ms, at most ${MAX_SCRIPT_TIMEOUT_MS}, about 24.8 days)
or 1 MiB of output. Everything after the script name is passed to the script. Exit code: the
script's, 124 after a time-out, 130 after Ctrl-C and 143 after SIGTERM (the script is killed),
2 for a usage error (such as a --timeout out of range).

${SOURCE_HELP}`,
  async run(args, io) {
    // Options are read only before the script name; the rest belongs to the script.
    const split = splitAtScript(args);
    const { values, positionals } = parseCommandArgs({ args: split.own, allowPositionals: true, options: { ...SOURCE_OPTIONS, timeout: { type: 'string' } } });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    if (positionals.length !== 2) throw new UsageError('run needs a skill name and a script');
    const [skill, script] = positionals as [string, string];
    const timeoutMs = values.timeout === undefined ? undefined : Number(values.timeout);
    const problem = timeoutMs === undefined ? undefined : scriptLimitProblem('timeoutMs', timeoutMs);
    if (problem) throw new UsageError(`--timeout ${problem}, not '${values.timeout}'`);
    const registry = await discoverFromFlags(values, io);
    const entry = registry.entry(skill);
    if (!entry) await registry.content(skill); // throws skill_not_found with the available names
    // The script runs in a process group of its own, which a Ctrl-C at the terminal does not
    // reach: an interrupted run kills it rather than leave it running.
    const interruption = new AbortController();
    let interrupted: NodeJS.Signals | undefined;
    const interrupt = (signal: NodeJS.Signals) => {
      interrupted = signal;
      interruption.abort();
    };
    process.once('SIGINT', interrupt);
    process.once('SIGTERM', interrupt);
    const result = await runSkillScript(entry!, script, split.rest, { timeoutMs, signal: interruption.signal }).finally(() => {
      process.off('SIGINT', interrupt);
      process.off('SIGTERM', interrupt);
    });
    io.out(result.stdout);
    io.err(result.stderr);
    if (interrupted) {
      io.err(`error: interrupted (${interrupted}); script '${script}' was killed\n`);
      return 128 + osConstants.signals[interrupted];
    }
    if (result.truncated) io.err(`note: output passed the limit; the script was stopped and the rest dropped\n`);
    if (result.strayProcessesKilled) io.err(`note: the script left processes running when it exited; they were killed\n`);
    if (result.timedOut) {
      io.err(`error: script '${script}' timed out after ${timeoutMs ?? DEFAULT_SCRIPT_TIMEOUT_MS} ms and was killed\n`);
      return 124;
    }
    return result.exitCode ?? 1;
  },
};

/** Splits the arguments after the second positional (the script); a `--` right after it is dropped. */
function splitAtScript(args: string[]): { own: string[]; rest: string[] } {
  const valued = new Set(['--project', '--user', '--bundled', '--path', '--example', '--trust-file', '--timeout']);
  let positionals = 0;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return { own: args.slice(0, i), rest: args.slice(i + 1) };
    if (arg.startsWith('-')) {
      if (valued.has(arg)) i++;
      continue;
    }
    if (++positionals === 2) {
      const rest = args.slice(i + 1);
      return { own: args.slice(0, i + 1), rest: rest[0] === '--' ? rest.slice(1) : rest };
    }
  }
  return { own: args, rest: [] };
}
