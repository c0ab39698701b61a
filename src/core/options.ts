/**
 * Options objects checked by key: a key a function does not take is refused, naming it and the
 * option it probably meant (a misspelled option would otherwise be ignored without a word).
 *
 * Pure: no I/O, no XState.
 */
import { closestName, didYouMean } from './closest-name.js';
import { errorInfo, type ErrorInfo } from './errors.js';
import { describeGiven, isPlainObject } from './plain.js';

/**
 * The first key of `options` that is not one of `known`, as an `invalid_options` error naming it
 * and, when one is close, the option it probably meant; undefined when every key is known.
 * `where` names what takes the options: `call`, `createAgentSystem`. `aliases` maps names users
 * bring from elsewhere, too far from the option's own name to be caught as a slip, to that option
 * (`paths`, as the CLI's `--path`, to `extra`).
 */
export function unknownOption(where: string, options: object, known: Readonly<Record<string, unknown>>, aliases: Readonly<Record<string, string>> = {}): ErrorInfo | undefined {
  for (const key of Object.keys(options)) {
    if (Object.hasOwn(known, key)) continue;
    const names = Object.keys(known);
    const meant = Object.hasOwn(aliases, key) ? aliases[key] : closestName(key, names);
    return errorInfo('invalid_options', `unknown option '${key}'${didYouMean(meant)} (${where} options are: ${names.join(', ')})`, {
      subject: key,
      details: meant === undefined ? { option: key, known: names } : { option: key, known: names, suggestion: meant },
    });
  }
  return undefined;
}

/**
 * Why `options` cannot be the options of `where`: given, yet not an object (`example` shows one,
 * `{ strict: true }`), or with a key `unknownOption` refuses. Undefined for options that can be
 * read, and for none at all.
 */
export function optionsProblem(
  where: string,
  options: unknown,
  known: Readonly<Record<string, unknown>>,
  example: string,
  aliases: Readonly<Record<string, string>> = {},
): ErrorInfo | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    return errorInfo('invalid_options', `${where} options must be an object such as ${example}, got ${describeGiven(options)}`, { subject: where });
  }
  return unknownOption(where, options, known, aliases);
}

/**
 * Why `definition` has a field its `define*` function does not take — `rotues is not a field of
 * the definition; did you mean 'routes'?` — or undefined when every field is known. A misspelled
 * field would otherwise be dropped without a word, and the definition work without it (a skill
 * without its routes). With `misspelledOnly`, only a key close to a known field counts: a
 * definition whose hooks read other fields of their own (`this.label`) keeps those.
 */
export function unknownField(
  definition: object,
  known: Readonly<Record<string, unknown>>,
  { of = 'the definition', misspelledOnly = false }: { of?: string; misspelledOnly?: boolean } = {},
): UnknownField | undefined {
  for (const key of Object.keys(definition)) {
    if (Object.hasOwn(known, key)) continue;
    const names = Object.keys(known);
    const meant = closestName(key, names);
    if (meant === undefined && misspelledOnly) continue;
    const message = `is not a field of ${of}${didYouMean(meant)} (fields: ${names.join(', ')})`;
    return meant === undefined ? { field: key, message, known: names } : { field: key, message, known: names, suggestion: meant };
  }
  return undefined;
}

/**
 * `unknownField` for a value checked at every step (an instruction, an action's changes, an
 * effect): a loop over its own keys that allocates nothing while each is known, the field
 * described only once one is not.
 */
export function strayField(value: object, known: Readonly<Record<string, unknown>>, of: string): UnknownField | undefined {
  for (const key in value) if (!Object.hasOwn(known, key) && Object.hasOwn(value, key)) return unknownField(value, known, { of });
  return undefined;
}

/** A field `unknownField` found: its name, why it is refused, the fields there are and the one it probably meant. */
export interface UnknownField {
  field: string;
  /** `is not a field of …; did you mean '…'? (fields: …)`, to follow the field's name. */
  message: string;
  known: string[];
  suggestion?: string;
}

/**
 * An `invalid_options` error for an options bag (a plain object) given past the `takes` arguments
 * (their names) of `where`, as `arguments` shows them: a function that takes no options would
 * ignore it without a word. `instead` says what to write for what it was likely meant to do.
 * Anything else past them is let be: `texts.map(chatMessage)` passes an index and the array.
 * Undefined when no options bag follows them.
 */
export function extraArguments(where: string, given: ArrayLike<unknown>, takes: readonly string[], instead: string): ErrorInfo | undefined {
  for (let i = takes.length; i < given.length; i++) {
    if (!isPlainObject(given[i])) continue;
    const what = takes.length === 0 ? 'takes no options' : `takes ${takes.join(', ')} only, no options`;
    return errorInfo('invalid_options', `${where} ${what}, got an object: ${instead}`, { subject: where });
  }
  return undefined;
}
