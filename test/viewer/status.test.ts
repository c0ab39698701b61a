/**
 * The page's reading of an agent's status (viewer/status.js, a module of the page with no DOM):
 * the stream says whether the agent's actor runs, the application's `describe` says what became of
 * it. A stopped or passivated agent is never shown as running, nor steered.
 */
import { describe, expect, it } from 'vitest';

interface StatusModule {
  agentStatus(streamStatus: string | undefined, described: string | undefined): { status: string; running: boolean };
  steerable(described: string | undefined): boolean;
}

const { agentStatus, steerable } = (await import(new URL('../../viewer/status.js', import.meta.url).href)) as StatusModule;

describe("an agent's status on the page", () => {
  it("is the application's word for an agent that does not run: passivated or stopped, whatever the stream last said", () => {
    expect(agentStatus('stopped', 'passivated')).toEqual({ status: 'passivated', running: false });
    expect(agentStatus('stopped', 'stopped')).toEqual({ status: 'stopped', running: false });
    // Said before the stream reported the actor stopped: still not running.
    expect(agentStatus('active', 'passivated')).toEqual({ status: 'passivated', running: false });
  });

  it("is the stream's when the application has not said, or said the agent runs", () => {
    expect(agentStatus('stopped', undefined)).toEqual({ status: 'stopped', running: false });
    expect(agentStatus('stopped', 'idle')).toEqual({ status: 'stopped', running: false });
    expect(agentStatus('error', undefined)).toEqual({ status: 'error', running: false });
    expect(agentStatus('active', 'working')).toEqual({ status: 'active', running: true });
    expect(agentStatus('active', undefined)).toEqual({ status: 'active', running: true });
  });

  it('offers steering only for an agent that runs (idle or working)', () => {
    expect([steerable('idle'), steerable('working')]).toEqual([true, true]);
    expect([steerable('stopped'), steerable('passivated'), steerable(undefined)]).toEqual([false, false, false]);
  });
});
