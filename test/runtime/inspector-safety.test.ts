/**
 * The inspector is safe by default: it listens on the loopback interface only, answers to
 * loopback names only, lets no other site's page read the stream, and with redaction on a secret
 * planted in state, config and signal data never leaves the process.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startInspector, type InspectorHandle, type InspectorOptions } from '../../src/runtime/inspect.js';
import { REDACTED, type InspectionMessage } from '../../src/viewer/messages.js';
import { createSignal, defineAgent, defineSkill, notebook, quietSystem, z } from './fixtures.js';

let inspector: InspectorHandle | undefined;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await inspector?.stop();
  inspector = undefined;
});

function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** An address of this machine that is not loopback, if it has one. */
function externalAddress(): string | undefined {
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) if (!entry.internal && entry.family === 'IPv4') return entry.address;
  }
  return undefined;
}

function status(port: number, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/local/', headers }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    req.once('error', reject);
    req.end();
  });
}

async function listen(url: string, headers: Record<string, string> = {}): Promise<{ socket: WebSocket; texts: string[] }> {
  const socket = new WebSocket(url, { headers });
  const texts: string[] = [];
  socket.on('message', (data) => texts.push(String(data)));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  cleanups.push(() => socket.close());
  return { socket, texts };
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the inspection server listens on loopback unless told otherwise', () => {
  it('binds 127.0.0.1 by default: reachable through loopback, not through another interface', async () => {
    inspector = await startInspector();
    expect(inspector.host).toBe('127.0.0.1');
    expect(await reachable('127.0.0.1', inspector.port)).toBe(true);
    const external = externalAddress();
    if (external) expect(await reachable(external, inspector.port)).toBe(false);
  });

  it('binds the host it is given', async () => {
    inspector = await startInspector({ host: '0.0.0.0' });
    expect(inspector.host).toBe('0.0.0.0');
    const external = externalAddress() ?? '127.0.0.1';
    expect(await reachable(external, inspector.port)).toBe(true);
  });

  it('answers to loopback names only, and refuses a socket opened by another site', async () => {
    inspector = await startInspector({ viewer: 'local' });
    expect(await status(inspector.port, { host: `127.0.0.1:${inspector.port}` })).toBe(200);
    expect(await status(inspector.port, { host: `localhost:${inspector.port}` })).toBe(200);
    expect(await status(inspector.port, { host: `attacker.example:${inspector.port}` })).toBe(403);
    await expect(listen(inspector.socketUrl, { origin: 'http://attacker.example' })).rejects.toThrow(/401/);
    await expect(listen(inspector.socketUrl, { origin: `http://127.0.0.1:${inspector.port}` })).resolves.toBeDefined();
  });
});

const SECRET = 'sk-planted-4242';
const vault = defineSkill({
  name: 'vault',
  schema: z.object({ notes: z.array(z.string()).default([]) }),
  configSchema: z.object({ apiKey: z.string().default('none') }),
});
const Keeper = defineAgent({ name: 'keeper', schema: z.object({ owner: z.string().default('') }), skills: [notebook, [vault, { apiKey: SECRET }]] });

/** Runs an agent holding the secret in its state, a skill's config and a signal, and returns every message a viewer received. */
async function streamed(redact: InspectorOptions['redact']): Promise<InspectionMessage[]> {
  inspector = await startInspector({ redact });
  const { texts } = await listen(inspector.socketUrl);
  const system = quietSystem({ inspect: inspector.inspect });
  cleanups.push(() => system.shutdown());
  const agent = system.spawn(Keeper, { id: 'keeper', state: { owner: SECRET } });
  await agent.call(createSignal('notes.add', { item: `remember ${SECRET}` }));
  await agent.unmount('notebook');
  await agent.mount(notebook);
  await until(() => texts.some((text) => text.includes('"type":"mount"')) && texts.filter((text) => text.includes('@xstate.snapshot')).length > 3, 'the mount to be streamed');
  await new Promise((resolve) => setTimeout(resolve, 50));
  return texts.map((text) => JSON.parse(text) as InspectionMessage);
}

describe('redaction', () => {
  it('without it, the secret is streamed (what the redaction tests below rely on)', async () => {
    const messages = await streamed(undefined);
    expect(messages.filter((message) => JSON.stringify(message).includes(SECRET)).length).toBeGreaterThan(2);
  });

  it('redact: true removes a planted secret from every streamed message and keeps names, states and event types', async () => {
    const messages = await streamed(true);
    expect(messages.filter((message) => JSON.stringify(message).includes(SECRET))).toEqual([]);
    const names = messages.filter((message) => message.type === '@xstate.actor').map((message) => message.name);
    expect(names).toEqual(expect.arrayContaining(['keeper', 'skill:notebook', 'skill:vault']));
    const signal = messages.find((message) => message.type === '@xstate.event' && message.event?.type === 'signal');
    expect(signal?.event).toEqual({ type: 'signal', signal: { type: 'notes.add', data: REDACTED } });
    const mount = messages.find((message) => message.type === '@xstate.event' && message.event?.type === 'mount');
    expect(mount?.event).toMatchObject({ type: 'mount', skill: 'notebook' });
    // The system's events name the agent they are about (so a viewer can show them under it); what they carry is redacted.
    const registered = messages.find((message) => message.type === '@xstate.event' && message.event?.type === 'register_action');
    expect(registered?.event).toEqual({ type: 'register_action', agent: 'keeper', effect: REDACTED, answered: REDACTED });
    const lifecycle = messages.filter((message) => message.type === '@xstate.snapshot' && message.snapshot?.value === 'inactive');
    expect(lifecycle.length).toBeGreaterThan(0);
    expect(lifecycle[0]!.snapshot!.context).toBe(REDACTED);
  });

  it('a redact function decides what leaves: dropping every event sends none', async () => {
    const messages = await streamed((message) => (message.type === '@xstate.event' ? undefined : { ...message, snapshot: message.snapshot && { ...message.snapshot, context: 'hidden' } }));
    expect(messages.some((message) => message.type === '@xstate.event')).toBe(false);
    expect(messages.some((message) => message.type === '@xstate.snapshot')).toBe(true);
  });

  it('a redact function that throws drops the message rather than sending it unredacted', async () => {
    const written: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => (written.push(String(chunk)), true)) as typeof process.stderr.write;
    cleanups.push(() => void (process.stderr.write = write));
    inspector = await startInspector({ redact: () => { throw new Error('no'); } });
    const { texts } = await listen(inspector.socketUrl);
    const system = quietSystem({ inspect: inspector.inspect });
    cleanups.push(() => system.shutdown());
    const agent = system.spawn(Keeper, { id: 'keeper', state: { owner: SECRET } });
    await agent.call(createSignal('notes.add', { item: SECRET }));
    await until(() => written.length > 0, 'the report');
    expect(texts).toEqual([]);
    expect(written.join('')).toMatch(/redact function threw/);
  });

  it('refuses a redact option that is neither a flag nor a function, an unknown viewer, a connect that is no URL and a port no socket takes', async () => {
    await expect(startInspector({ redact: 'yes' as unknown as boolean })).rejects.toMatchObject({ code: 'invalid_config', subject: 'redact' });
    await expect(startInspector({ viewer: 'remote' as 'local' })).rejects.toMatchObject({ code: 'invalid_config', subject: 'viewer' });
    await expect(startInspector({ connect: 'not a url' })).rejects.toMatchObject({ code: 'invalid_config', subject: 'connect' });
    await expect(startInspector({ port: -3 })).rejects.toMatchObject({ code: 'invalid_config', subject: 'port', message: expect.stringContaining('not -3') });
  });

  it('refuses an option it does not take, naming the one meant: a misspelled redact would stream secrets', async () => {
    await expect(startInspector({ redcat: true } as InspectorOptions)).rejects.toMatchObject({ code: 'invalid_options', subject: 'redcat', details: { suggestion: 'redact' } });
  });
});
