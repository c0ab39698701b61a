/**
 * The types of the signals a system sends and emits itself, for every layer that sends, routes
 * or listens for them: the runtime, the model loop, applications.
 *
 * Pure: no I/O, no XState.
 */

/** Emitted when an error is reported: data `{ agent, error }`. */
export const ERROR_SIGNAL = 'skillstate.error';
/** Emitted for each diagnostic: data `{ agent, diagnostic }`. */
export const DIAGNOSTIC_SIGNAL = 'skillstate.diagnostic';
/**
 * Sent to an agent when the caller of a call whose answer it deferred (`defer_reply`) aborted:
 * data `{ signal }`, the id of the called signal. The skill doing the work routes it to stop.
 */
export const CALL_ABORTED_SIGNAL = 'skillstate.call.aborted';
