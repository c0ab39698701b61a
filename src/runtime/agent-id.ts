/** The rule for agent ids, checked when an agent is spawned and when one is restored. */
import { errorInfo, type ErrorInfo } from '../core/errors.js';

/** A lone surrogate: a string that no UTF-8 text (a file name, a database row) can hold as it is. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * What is wrong with an agent id, if anything. A '/' is refused: the lifecycle actors of an
 * agent's skills are registered in XState's system as `<agent>/skills/<skill>`, and an agent id
 * with a '/' could name one of them. U+0000 and lone surrogates are refused: a store keeps the id
 * as text, where the first ends it and the second becomes another character, so the agent would
 * come back under another id.
 */
export function agentIdProblem(id: unknown): ErrorInfo | undefined {
  if (typeof id !== 'string' || id.length === 0) return errorInfo('invalid_agent', 'an agent id must be a non-empty string');
  if (id.includes('/')) {
    return errorInfo('invalid_agent', `agent id '${id}' contains '/', which is reserved for the ids of skill lifecycles ('<agent>/skills/<skill>'); use another character such as '-' or ':'`, { subject: id });
  }
  if (id.includes('\0')) return errorInfo('invalid_agent', `agent id ${JSON.stringify(id)} contains U+0000, which a store cannot keep in an id`, { subject: id });
  if (LONE_SURROGATE.test(id)) return errorInfo('invalid_agent', `agent id ${JSON.stringify(id)} contains a lone surrogate (half of a UTF-16 pair), which a store cannot keep in an id`, { subject: id });
  return undefined;
}
