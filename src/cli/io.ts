/**
 * What every command gets: where to write (stdout and stderr, replaceable in-process), and the
 * shape of a command. Commands return their exit code; they never call `process.exit`.
 *
 * No filesystem access here.
 */
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  /** Whether stderr is a terminal (progress animates only there). */
  isTTY: boolean;
}

export const processIO: CliIO = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  isTTY: process.stderr.isTTY === true,
};

/** A usage mistake: printed with the command's help hint, exit code 2. */
export class UsageError extends Error {}

export interface Command {
  name: string;
  help: string;
  run(args: string[], io: CliIO): Promise<number>;
}
