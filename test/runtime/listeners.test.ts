/**
 * Listeners observe; they do not answer. What `onError` and `onDiagnostic` listeners and
 * `skillstate.error` / `skillstate.diagnostic` subscribers receive is frozen, so none of them can
 * change what a caller receives or what the next listener sees. A listener that throws is
 * reported as a `listener_failed` diagnostic naming the kind of listener and what it threw; a
 * diagnostic listener that throws is reported once to the channels left, never to itself again.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DIAGNOSTIC_SIGNAL, ERROR_SIGNAL, type Diagnostic, type ErrorInfo, type TraceLine } from '../../src/index.js';
import { createSignal, NotesAgent, systemPerTest } from './fixtures.js';

const systems = systemPerTest();

afterEach(() => {
  vi.restoreAllMocks();
});

/** What a write does: `written`, or the name of what it threw. */
function attempt(write: () => void): string {
  try {
    write();
    return 'written';
  } catch (error) {
    return (error as Error).name;
  }
}

/** Writes into what it was given, as a careless logger "normalising" a report would. */
function rewrite(report: ErrorInfo | Diagnostic): string {
  return attempt(() => {
    (report as { code: string }).code = 'ok';
    report.message = 'all good';
  });
}

describe('listeners cannot change what the caller receives', () => {
  it("an onError listener that writes into the error changes neither the caller's error nor what the next listener sees", async () => {
    const system = systems.start();
    const attempts: string[] = [];
    const seen: string[] = [];
    system.onError((error) => {
      attempts.push(rewrite(error));
      attempts.push(attempt(() => ((error.details as Record<string, unknown>).reason = 'fine')));
    });
    system.onError((error) => seen.push(`${error.code}: ${error.code === 'action_failed' ? error.details?.reason : 'another code'}`));
    const agent = system.spawn(NotesAgent);
    const error = await agent.call(createSignal('notes.refuse')).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'action_failed', message: "action 'refuse' failed: this action always refuses", details: { reason: 'refused' } });
    expect(attempts).toEqual(['TypeError', 'TypeError']);
    expect(seen).toEqual(['action_failed: refused']);
  });

  it('a skillstate.error subscriber cannot change the error either', async () => {
    const system = systems.start();
    const attempts: string[] = [];
    system.subscribe(ERROR_SIGNAL, (signal) => attempts.push(rewrite((signal.data as { error: ErrorInfo }).error)));
    const error = await system.spawn(NotesAgent).call(createSignal('notes.refuse')).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'action_failed' });
    expect(attempts).toEqual(['TypeError']);
  });

  it("an onDiagnostic listener cannot change the diagnostics of the caller's mount report", async () => {
    const system = systems.start();
    const attempts: string[] = [];
    system.onDiagnostic((diagnostic) => attempts.push(rewrite(diagnostic)));
    const report = await system.spawn(NotesAgent).unmount('not-there');
    expect(report.diagnostics).toEqual([expect.objectContaining({ code: 'not_mounted', message: expect.stringContaining("'not-there'") })]);
    // The listener's failed write is itself reported (and reaches it no more).
    expect(attempts).toEqual(['TypeError']);
  });
});

describe('a listener that throws is reported, naming the kind of listener', () => {
  it('an onError listener that throws: a listener_failed diagnostic, and the error still reaches the others', async () => {
    const system = systems.start();
    const notes: Diagnostic[] = [];
    const errors: string[] = [];
    system.onError(() => {
      throw new Error('metrics exporter is down');
    });
    system.onError((error) => errors.push(error.code));
    system.onDiagnostic((diagnostic) => notes.push(diagnostic));
    await system.spawn(NotesAgent).call(createSignal('notes.refuse')).catch(() => {});
    expect(errors).toEqual(['action_failed']);
    expect(notes).toEqual([
      expect.objectContaining({
        code: 'listener_failed',
        subject: 'onError',
        message: "an onError listener threw while receiving error 'action_failed': metrics exporter is down",
        details: { listener: 'onError', about: 'action_failed' },
      }),
    ]);
  });

  it('a skillstate.error subscriber that throws: a listener_failed diagnostic naming the signal', async () => {
    const system = systems.start();
    const notes: Diagnostic[] = [];
    system.subscribe(ERROR_SIGNAL, () => {
      throw new Error('error-signal subscriber is down');
    });
    system.onDiagnostic((diagnostic) => notes.push(diagnostic));
    await system.spawn(NotesAgent).call(createSignal('notes.refuse')).catch(() => {});
    expect(notes).toEqual([
      expect.objectContaining({ code: 'listener_failed', subject: ERROR_SIGNAL, message: `a subscriber to '${ERROR_SIGNAL}' threw: error-signal subscriber is down` }),
    ]);
  });

  it('an error whose only listener threw was received by nobody: the unhandled handler gets it too', async () => {
    const unhandled: string[] = [];
    const system = systems.start({ onUnhandledError: (error) => unhandled.push(error.code), onUnhandledDiagnostic: (note) => unhandled.push(note.code) });
    system.onError(() => {
      throw new Error('down');
    });
    const agent = system.spawn(NotesAgent);
    agent.send(createSignal('notes.refuse'));
    await agent.call(createSignal('notes.list')); // taken after the refused one: its error is reported by now
    expect(unhandled).toEqual(['listener_failed', 'action_failed']);
  });

  it('an onDiagnostic listener that throws: the other diagnostic listeners hear of it once, and it is not told of its own failure', async () => {
    const system = systems.start();
    const calls: string[] = [];
    const heard: string[] = [];
    system.onDiagnostic((diagnostic) => {
      calls.push(diagnostic.code);
      throw new Error('diagnostic sink is down');
    });
    system.onDiagnostic((diagnostic) => heard.push(`${diagnostic.code}: ${diagnostic.message}`));
    await system.spawn(NotesAgent).unmount('not-there');
    expect(calls).toEqual(['not_mounted']);
    expect(heard).toEqual([
      expect.stringMatching(/^not_mounted: /),
      "listener_failed: an onDiagnostic listener threw while receiving diagnostic 'not_mounted': diagnostic sink is down",
    ]);
  });

  it('when the only diagnostic listener throws, its failure goes to the trace, or else to the unhandled handler', async () => {
    const lines: TraceLine[] = [];
    const traced = systems.start({ trace: (line) => lines.push(line) });
    traced.onDiagnostic(() => {
      throw new Error('down');
    });
    await traced.spawn(NotesAgent).unmount('not-there');
    expect(lines.flatMap((line) => (line.kind === 'diagnostic' ? [line.diagnostic.code] : []))).toEqual(['not_mounted', 'listener_failed']);

    const unhandled: string[] = [];
    const untraced = systems.start({ onUnhandledDiagnostic: (note) => unhandled.push(note.code) });
    untraced.onDiagnostic(() => {
      throw new Error('down');
    });
    await untraced.spawn(NotesAgent).unmount('not-there');
    expect(unhandled).toEqual(['listener_failed', 'not_mounted']);
  });

  it('diagnostic listeners and subscribers that always throw are each called once per diagnostic: no loop', async () => {
    const unhandled: string[] = [];
    const system = systems.start({ onUnhandledDiagnostic: (note) => unhandled.push(note.code) });
    const calls = { first: 0, second: 0, subscriber: 0 };
    system.onDiagnostic(() => {
      calls.first++;
      throw new Error('first is down');
    });
    system.onDiagnostic(() => {
      calls.second++;
      throw new Error('second is down');
    });
    system.subscribe(DIAGNOSTIC_SIGNAL, () => {
      calls.subscriber++;
      throw new Error('subscriber is down');
    });
    await system.spawn(NotesAgent).unmount('not-there');
    expect(calls).toEqual({ first: 1, second: 1, subscriber: 1 });
    expect(unhandled).toEqual(['listener_failed', 'listener_failed', 'listener_failed', 'not_mounted']);
  });

  it('a listener that throws only while hearing of another listener failing is written to stderr', async () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const system = systems.start();
    let calls = 0;
    system.onDiagnostic(() => {
      throw new Error('always down');
    });
    system.onDiagnostic((diagnostic) => {
      calls++;
      if (diagnostic.code === 'listener_failed') throw new Error('down on failures');
    });
    await system.spawn(NotesAgent).unmount('not-there');
    vi.restoreAllMocks();
    expect(calls).toBe(2);
    expect(written).toEqual(["[skillstate] an onDiagnostic listener threw while receiving diagnostic 'listener_failed': down on failures\n"]);
  });
});
