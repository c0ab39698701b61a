/**
 * The values of `createAgentSystem`'s runtime options, checked when the system is made: an option
 * of the wrong shape (one registry where a list of resolvers goes, a number where a listener goes)
 * is refused at once with `invalid_options` naming it, rather than failing far from the line that
 * gave it — at the first mount, the first trace line, the first unhandled error — or never.
 * Unknown keys are refused by `createAgentSystem` itself (`unknownOption`).
 */
import { DefinitionError, errorInfo } from '../core/errors.js';
import { describeGiven } from '../core/plain.js';

/** The options checked here, each with what it must be. */
type Checked = 'definitions' | 'skills' | 'resolvers' | 'onUnhandledError' | 'onUnhandledDiagnostic' | 'trace' | 'inspect' | 'callTimeout';

const isFunction = (value: unknown): boolean => typeof value === 'function';
const hasMethod = (value: unknown, method: string): boolean => typeof value === 'object' && value !== null && typeof (value as Record<string, unknown>)[method] === 'function';

/** For each option: whether a given value can be used, and the words saying what it must be. */
const RULES: { [K in Checked]: { fits: (value: unknown) => boolean; must: string } } = {
  definitions: { fits: Array.isArray, must: 'an array of agent definitions, as in { definitions: [MyAgent] }' },
  skills: { fits: (value) => Array.isArray(value) || (hasMethod(value, 'get') && hasMethod(value, 'register')), must: 'an array of skills or a skill registry (createSkillRegistry)' },
  resolvers: { fits: Array.isArray, must: 'an array of skill resolvers, as in { resolvers: [registry] }' },
  onUnhandledError: { fits: isFunction, must: 'a function (error, agentId) => void' },
  onUnhandledDiagnostic: { fits: isFunction, must: 'a function (diagnostic, agentId) => void' },
  trace: { fits: (value) => typeof value === 'boolean' || (typeof value === 'string' && value !== '') || isFunction(value) || hasMethod(value, 'write'), must: 'true, a file path, a stream with write(line) or a function (line) => void' },
  inspect: {
    fits: (value) => isFunction(value) || hasMethod(value, 'next') || (typeof value === 'object' && value !== null && (isFunction((value as { inspect?: unknown }).inspect) || hasMethod((value as { inspect?: unknown }).inspect, 'next'))),
    must: "an XState inspector: a function, an observer with next(event), or startInspector()'s result",
  },
  callTimeout: { fits: (value) => typeof value === 'number' && value > 0, must: 'a number of milliseconds above 0 (or Infinity)' },
};

/** Throws a `DefinitionError` (`invalid_options`) naming the first runtime option given a value that cannot be used. */
export function checkRuntimeOptions(options: Partial<Record<Checked, unknown>>): void {
  for (const option of Object.keys(RULES) as Checked[]) {
    const value: unknown = options[option];
    if (value === undefined || RULES[option].fits(value)) continue;
    throw new DefinitionError(
      errorInfo('invalid_options', `${option} must be ${RULES[option].must}, got ${describeGiven(value)}`, { subject: option, details: { option, value: describeGiven(value) } }),
    );
  }
}
