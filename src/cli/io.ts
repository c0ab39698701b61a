/**
 * What every command gets: where to write (stdout and stderr, replaceable in-process), how it
 * reads its arguments, and the shape of a command. Commands return their exit code; they never
 * call `process.exit`.
 *
 * No filesystem access here.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closestName, didYouMean } from '../core/closest-name.js';

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

/**
 * A command's arguments, as `parseArgs` reads them, except that an option taking one value given
 * twice (`--port 1 --port 2`) is a usage mistake: `parseArgs` would keep the last one silently.
 */
export function parseCommandArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  const { tokens, ...parsed } = parseWithSuggestion({ ...config, tokens: true });
  const values = new Map<string, string | undefined>();
  for (const token of tokens ?? []) {
    if (token.kind !== 'option') continue;
    const option = config.options?.[token.name];
    if (option?.type !== 'string' || option.multiple) continue;
    if (values.has(token.name)) throw new UsageError(`${token.rawName} is given twice ('${values.get(token.name)}', then '${token.value}'): give it once`);
    values.set(token.name, token.value);
  }
  return parsed as ReturnType<typeof parseArgs<T>>;
}

/** `parseArgs`, whose refusal of a misspelled option (`--modle`) names the option it was likely meant to be. */
function parseWithSuggestion<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    const unknown = (error as { code?: unknown }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'--([^'=]+)'/.exec((error as Error).message)?.[1] : undefined;
    const meant = unknown === undefined ? undefined : closestName(unknown, Object.keys(config.options ?? {}));
    if (meant === undefined) throw error;
    throw new UsageError(`unknown option '--${unknown}'${didYouMean(`--${meant}`)}`);
  }
}
