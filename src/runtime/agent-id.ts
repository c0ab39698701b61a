/** The rule for agent ids, checked when an agent is spawned and when one is restored. */
import { errorInfo, type ErrorInfo } from '../core/errors.js';

/**
 * What is wrong with an agent id, if anything. A '/' is refused: the lifecycle actors of an
 * agent's skills are registered in XState's system as `<agent>/skills/<skill>`, and an agent id
 * with a '/' could name one of them.
 */
export function agentIdProblem(id: unknown): ErrorInfo | undefined {
  if (typeof id !== 'string' || id.length === 0) return errorInfo('invalid_agent', 'an agent id must be a non-empty string');
  if (id.includes('/')) {
    return errorInfo('invalid_agent', `agent id '${id}' contains '/', which is reserved for the ids of skill lifecycles ('<agent>/skills/<skill>'); use another character such as '-' or ':'`, { subject: id });
  }
  return undefined;
}
