/**
 * A cancelled turn's model request is aborted on the Restate host whatever the turn was doing,
 * against a Restate server that asks an invocation to suspend after one quiet second (its default
 * is a minute), so that a model call outlasts that wait without a test waiting a minute.
 *
 * How a cancel could miss the model request: a model call sends Restate nothing while it runs,
 * and once the server has asked an invocation to suspend it passes it no more notifications, its
 * cancellation included (the turn object keeps Restate waiting longer than any model call may
 * take); and a turn whose handler has ended may have its attempt's stream closed late by Restate
 * (the turn aborts what it left under way itself, at once).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectRestate, type RestateClient } from '../../src/restate/index.js';
import { eventually, startHost } from './harness.js';

/** How long a cancelled turn's model request may take to be aborted in the service (through the Restate server) on a loaded machine. */
const ABORT_WAIT_MS = 60_000;

let host: Awaited<ReturnType<typeof startHost>>;
let client: RestateClient;
const scratch = mkdtempSync(path.join(os.tmpdir(), 'skillstate-restate-cancel-'));
/** While this file exists, a "slowly" answer (and a "slow summary") waits two minutes (see agents.ts). */
const hold = path.join(scratch, 'hold');
/** While this file exists, the service sees the end of a turn object's attempt late (see service.ts). */
const holdClose = path.join(scratch, 'hold-close');

beforeAll(async () => {
  // The server reads its configuration from its environment, which it takes from this process's.
  process.env.RESTATE_WORKER__INVOKER__INACTIVITY_TIMEOUT = '1s';
  try {
    host = await startHost({ SKILLSTATE_TEST_HOLD: hold, SKILLSTATE_TEST_HOLD_CLOSE: holdClose });
  } finally {
    delete process.env.RESTATE_WORKER__INVOKER__INACTIVITY_TIMEOUT;
  }
  client = connectRestate(host.server.ingressUrl);
}, 60_000);

afterEach(() => {
  rmSync(hold, { force: true });
  rmSync(holdClose, { force: true });
});

afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await host?.close();
});

/**
 * Resolves once the server's inactivity timeout has passed since it was called: a deferred call
 * made now has the workflow holding its answer suspended by the server once that workflow has been
 * quiet that long (the service says so in its log).
 */
async function quietTimePassed(id: string): Promise<void> {
  const desk = await client.spawn('desk_agent', { id });
  const asked = desk.call('desk.ask', { question: 'has a second passed?' });
  const suspended = new RegExp(`\\[skillstate_replies/desk_agent/${id}/[^\\]]+/run\\]\\[[^\\]]+\\] INFO: Invocation suspended`);
  await eventually(`the server to ask the quiet workflow of '${id}' to suspend`, async () => suspended.test(host.service.output()), ABORT_WAIT_MS);
  await desk.call('desk.answer', { text: 'yes' });
  expect(await asked).toBe('yes');
}

/** Waits for `line` in the service's log, or fails with what the service said. */
async function logged(what: string, line: string): Promise<void> {
  await eventually(what, async () => host.service.output().includes(line), ABORT_WAIT_MS).catch((error: Error) => {
    throw new Error(`${error.message}; the service said:\n${host.service.output().slice(-2_000)}`);
  });
}

describe('Restate host: cancelling a turn', () => {
  it("an agent stopped while its model call has been quiet for longer than Restate's inactivity timeout: the model request is aborted", async () => {
    const agent = await client.spawn('chatter', { id: 'quiet' });
    // The model's answer after the tool does not come before the stop, however long that takes.
    writeFileSync(hold, '');
    const text = 'slowly add 20 and 22';
    const answer = agent.call('chat.message', { text });
    await logged('the model call after the tool', `model call after a tool: ${text}`);
    await quietTimePassed('clock');
    await agent.stop();
    await expect(answer).rejects.toMatchObject({ code: 'agent_stopped' });
    await logged('the model request to be aborted', `model call aborted: ${text}`);
  }, 3 * ABORT_WAIT_MS);

  it('a cancelled turn aborts its model request at once, however late Restate closes the ended attempt', async () => {
    const agent = await client.spawn('chatter', { id: 'lingering' });
    writeFileSync(hold, '');
    writeFileSync(holdClose, '');
    const text = 'slowly add 5 and 6';
    const answer = agent.call('chat.message', { text });
    await logged('the model call after the tool', `model call after a tool: ${text}`);
    await agent.send('chat.cancel', { reason: 'enough' });
    await expect(answer).rejects.toMatchObject({ code: 'cancelled', message: 'enough' });
    await logged('the model request to be aborted', `model call aborted: ${text}`);
  }, 3 * ABORT_WAIT_MS);

  it('chat.cancel while the history is being summarised aborts the summary request', async () => {
    const agent = await client.spawn('forgetful', { id: 'summarising' });
    // A first turn long enough that the next one summarises it first (the history takes 120 tokens at most).
    expect(await agent.call('chat.message', { text: `add 1 and 2, and keep a slow summary of ${'a long story '.repeat(40)}` })).toBe('The total is 3.');
    writeFileSync(hold, '');
    const next = agent.call('chat.message', { text: 'hello' });
    await logged('the summary call', 'summary call made: ');
    await agent.send('chat.cancel', { reason: 'enough' });
    await expect(next).rejects.toMatchObject({ code: 'cancelled', message: 'enough' });
    await logged('the summary request to be aborted', 'summary call aborted: ');
    expect(host.service.output()).not.toContain('model call made: hello');
  }, 3 * ABORT_WAIT_MS);

  it('chat.cancel while the turn waits to try a failed model call again ends the turn at once, and the model is not asked again', async () => {
    const agent = await client.spawn('patient', { id: 'waiting-retry' });
    const text = 'break patiently';
    const answer = agent.call('chat.message', { text });
    await logged('the retry to be scheduled', "agent 'waiting-retry', turn 1: model 'scripted:ledger' failed (HTTP 503): the provider is down; trying again in 60000 ms");
    await agent.send('chat.cancel', { reason: 'enough' });
    await expect(answer).rejects.toMatchObject({ code: 'cancelled', message: 'enough' });
    // The turn's invocation ends on the cancel, not after its minute's wait: nothing of it asks the model again.
    await logged('the turn invocation to end on the cancel', "skillstate: agent 'waiting-retry': turn 1 was cancelled");
    // The service says each call within 50 ms of it (see service.ts): the first may be said after the
    // cancel, and a second, made on the cancel, would be said within a few of those.
    await logged('the model call to be said', `model call made: ${text}`);
    await sleep(250);
    expect(host.service.output().split(`model call made: ${text}`)).toHaveLength(2);
    expect((await agent.getSnapshot()).state).toMatchObject({ conversation: { turn: null } });
  }, 3 * ABORT_WAIT_MS);

  it("a conversation mounted at run time whose model calls may outlast the turn object's inactivity timeout is said in the service's log, once a turn", async () => {
    const agent = await client.spawn('latecomer', { id: 'late' });
    await agent.call('conversation.mount');
    expect(await agent.call('chat.message', { text: 'add 1 and 2' })).toBe('The total is 3.');
    // The served definitions' conversations allow two minutes (the default), and the turn object a minute more.
    const note = "skillstate: agent 'late': its conversation's modelTimeout (300000 ms) is longer than the model calls the turn object keeps Restate waiting for (120000 ms";
    expect(host.service.output()).toContain(`${note}, the longest modelTimeout of the served definitions' conversations): a turn cancelled after 180000 ms of a model call has its model request run to its end`);
    // Said once although the turn asked the model twice.
    expect(host.service.output().split(note)).toHaveLength(2);
  }, ABORT_WAIT_MS);
});
