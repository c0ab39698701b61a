/**
 * The plain trace: every signal, step, effect, lifecycle transition and diagnostic as one JSON
 * line, for people without a browser (`createAgentSystem({ trace: 'trace.jsonl' })`, or
 * `trace: true` for stderr). Off unless asked for, and then the only cost is building lines.
 *
 * The tracer is called from inside actors' actions, so it never throws: a record that JSON
 * cannot encode (a BigInt or a cycle in a signal's data) is written without its payload, and a
 * trace function or stream that throws is reported once on stderr and otherwise ignored.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { Diagnostic } from '../core/diagnostics.js';
import type { Effect } from '../core/effects.js';
import { describeThrown, type ErrorInfo } from '../core/errors.js';

/**
 * One record of the plain trace: a signal, a step, an effect, a lifecycle transition, a
 * diagnostic, an agent passivated or woken, or brought back to its last durable state (`revert`:
 * the same agent, not stopped; its lifecycles follow as restored).
 */
export type TraceRecord =
  | { kind: 'spawn'; agent: string; definition: string; parent?: string; restored?: boolean }
  | { kind: 'stop'; agent: string; reason: string }
  | { kind: 'passivate'; agent: string }
  | { kind: 'wake'; agent: string }
  | { kind: 'revert'; agent: string; reason: string }
  | { kind: 'signal'; agent: string; id: string; type: string; call: boolean }
  | { kind: 'step'; agent: string; item: 'signal' | 'run' | 'mount' | 'unmount' | 'start'; subject: string; ok: boolean; error?: ErrorInfo; cause?: TracedCause; effects: string[] }
  | { kind: 'effect'; agent: string; effect: Effect }
  | { kind: 'lifecycle'; agent: string; skill: string; state: string; restarted?: { child: string; reason: string }; error?: ErrorInfo }
  | { kind: 'diagnostic'; agent?: string; diagnostic: Diagnostic }
  | { kind: 'turn'; agent: string; turn: number; state: string };

/** What user code threw behind a step's error, as a trace line carries it (the error itself is in memory only). */
export interface TracedCause {
  name?: string;
  message: string;
  stack?: string;
}

/** The traced form of an error's cause, or undefined when there is none. */
export function traceCause(cause: unknown): TracedCause | undefined {
  if (cause === undefined) return undefined;
  if (!(cause instanceof Error)) return { message: describeThrown(cause) };
  const traced: TracedCause = { name: cause.name, message: describeThrown(cause) };
  if (typeof cause.stack === 'string') traced.stack = cause.stack;
  return traced;
}

/** A line as written: the record with a timestamp first. */
export type TraceLine = { time: string } & TraceRecord;

/** Where trace lines go: stderr (`true`), a file path, a stream, or a function. */
export type TraceOption = boolean | string | { write(line: string): unknown } | ((line: TraceLine) => void);

export interface Tracer {
  (record: TraceRecord): void;
  close(): void;
}

/** Builds the tracer for an option, or undefined when tracing is off. */
export function createTracer(option: TraceOption | undefined): Tracer | undefined {
  if (option === undefined || option === false) return undefined;
  let emit: (line: TraceLine) => void;
  let close = () => {};
  if (typeof option === 'function') emit = option;
  else if (option === true) emit = (line) => process.stderr.write(`${encode(line)}\n`);
  else if (typeof option === 'string') {
    const fd = openSync(option, 'a');
    emit = (line) => writeSync(fd, `${encode(line)}\n`);
    close = () => closeSync(fd);
  } else {
    const stream = option;
    emit = (line) => stream.write(`${encode(line)}\n`);
  }
  let broken = false;
  const tracer = ((record: TraceRecord) => {
    try {
      emit({ time: new Date().toISOString(), ...record });
    } catch (error) {
      if (broken) return;
      broken = true;
      process.stderr.write(`[skillstate] the trace failed and later failures are not reported: ${describeThrown(error)}\n`);
    }
  }) as Tracer;
  tracer.close = () => {
    try {
      close();
    } catch {
      // closing a trace file that is already gone changes nothing
    }
  };
  return tracer;
}

/** A line as JSON; a record whose payload JSON cannot encode keeps its kind and agent and says why. */
function encode(line: TraceLine): string {
  try {
    return JSON.stringify(line);
  } catch (error) {
    const kept: Record<string, unknown> = { time: line.time, kind: line.kind, unencodable: describeThrown(error) };
    if ('agent' in line) kept.agent = line.agent;
    return JSON.stringify(kept);
  }
}
