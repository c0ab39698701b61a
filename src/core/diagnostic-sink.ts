/**
 * Where a component outside a system reports what it did to the system's agents (a skill watcher
 * that unmounted a skill removed from disk, say): to the system's own diagnostic listeners, as a
 * diagnostic about that agent, where a program listening to the system hears it. A system
 * registers its sink as it starts (kept by the system object, as a system's resolvers are, out of
 * its public surface); anything else has none.
 *
 * No I/O, no XState: a weak map from each system to its sink.
 */
import type { Diagnostic } from './diagnostics.js';

/** Reports a diagnostic to a system's listeners, about one of its agents (or none). */
export type DiagnosticSink = (diagnostic: Diagnostic, agentId: string | undefined) => void;

const SINKS = new WeakMap<object, DiagnosticSink>();

/** Makes `sink` where diagnostics about `owner`'s agents go. */
export function setDiagnosticSink(owner: object, sink: DiagnosticSink): void {
  SINKS.set(owner, sink);
}

/** Where diagnostics about `owner`'s agents go; undefined when it registered none. */
export function diagnosticSinkOf(owner: object): DiagnosticSink | undefined {
  return SINKS.get(owner);
}
