/**
 * Options objects checked by key: a key a function does not take is refused, naming it and the
 * option it probably meant (a misspelled option would otherwise be ignored without a word).
 *
 * Pure: no I/O, no XState.
 */
import { closestName, didYouMean } from './closest-name.js';
import { errorInfo, type ErrorInfo } from './errors.js';

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
): { field: string; message: string } | undefined {
  for (const key of Object.keys(definition)) {
    if (Object.hasOwn(known, key)) continue;
    const meant = closestName(key, Object.keys(known));
    if (meant === undefined && misspelledOnly) continue;
    return { field: key, message: `is not a field of ${of}${didYouMean(meant)} (fields: ${Object.keys(known).join(', ')})` };
  }
  return undefined;
}
