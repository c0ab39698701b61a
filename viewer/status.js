// An agent's status as the page shows it. The stream tells whether the agent's actor runs; the
// application, asked to describe its agents, tells more: an agent whose actor stopped may be
// `stopped` or `passivated` (idle, written out to its store and out of memory until a signal
// wakes it). Either is shown as a badge on the agent, never as a working agent with controls.

/** The statuses of an agent that runs (`ref.getSnapshot().status`): only these are steered. */
const RUNNING = new Set(['idle', 'working']);

/**
 * What the page shows of an agent: `{ status, running }` — `active` and running, or the status
 * that says why not (the application's word, `described`, when it gave one; else the stream's).
 */
export function agentStatus(streamStatus, described) {
  if (typeof described === 'string' && !RUNNING.has(described)) return { status: described, running: false };
  if (streamStatus !== undefined && streamStatus !== 'active') return { status: streamStatus, running: false };
  return { status: 'active', running: true };
}

/** Whether a described agent may be steered from the page: it runs. */
export function steerable(described) {
  return RUNNING.has(described);
}
