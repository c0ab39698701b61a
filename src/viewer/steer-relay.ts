/**
 * The inspection server's half of steering: which connection is which application, the commands
 * sent to each and waiting for an answer, and the checks a page's request passes first — steering
 * on, the session token, the page's own Origin — in that order, each refusal with its code.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { WebSocket } from 'ws';
import { parseSteerCommand, refusal, STEER_ANSWER, STEER_COMMAND, STEERING_OPS, type SteerAnswer, type SteerCommandMessage } from './steering.js';

/** How long a command waits for the application's answer (a call waits for its step). */
const ANSWER_TIMEOUT = 120_000;

/** The header a page sends the session token in (a custom header: another site's page cannot send it without the server's consent). */
export const TOKEN_HEADER = 'x-skillstate-token';

export class SteerRelay {
  /** Present when steering is on: the secret a page must send with every steering request. */
  readonly token: string | undefined;
  private readonly apps = new Map<string, WebSocket>();
  private readonly waiting = new Map<string, { resolve: (answer: SteerAnswer) => void; timer: NodeJS.Timeout; from: WebSocket }>();

  constructor(interactive: boolean) {
    this.token = interactive ? randomBytes(24).toString('base64url') : undefined;
  }

  /** A connection became application `id`. */
  join(id: string, socket: WebSocket): void {
    this.apps.set(id, socket);
    socket.once('close', () => {
      if (this.apps.get(id) === socket) this.apps.delete(id);
    });
  }

  /** Takes an application's answer (only from the connection asked); true when `text` was one (it is not relayed to viewers). */
  answered(text: string, from: WebSocket): boolean {
    if (!text.includes(STEER_ANSWER)) return false;
    let message: { type?: unknown; id?: unknown };
    try {
      message = JSON.parse(text) as { type?: unknown; id?: unknown };
    } catch {
      return false;
    }
    if (message.type !== STEER_ANSWER || typeof message.id !== 'string') return false;
    const waiting = this.waiting.get(message.id);
    if (waiting && waiting.from === from) {
      this.waiting.delete(message.id);
      clearTimeout(waiting.timer);
      const { type: _type, id: _id, ...answer } = message;
      waiting.resolve(answer as SteerAnswer);
    }
    return true;
  }

  /** True when `text` is a command sent over a socket: never carried out, never relayed. */
  static isCommand(text: string): boolean {
    if (!text.includes(STEER_COMMAND)) return false;
    try {
      return (JSON.parse(text) as { type?: unknown }).type === STEER_COMMAND;
    } catch {
      return false;
    }
  }

  private tokenMatches(given: string | undefined): boolean {
    if (!this.token || !given) return false;
    const expected = Buffer.from(this.token);
    const actual = Buffer.from(given);
    return expected.length === actual.length && timingSafeEqual(expected, actual);
  }

  /** A page's request: checked, then passed to the application it names; resolves with the HTTP status and the answer. */
  async request(request: IncomingMessage, body: string): Promise<{ status: number; answer: SteerAnswer }> {
    // Browsers send Origin with every POST: one that is not this server's is another site's page.
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== `http://${request.headers.host}`) return { status: 403, answer: refusal('foreign_origin', origin) };
    let parsed: unknown;
    try {
      parsed = JSON.parse(body) as unknown;
    } catch {
      return { status: 400, answer: refusal('invalid_command', 'the body is not JSON') };
    }
    const { app, ...rest } = (parsed && typeof parsed === 'object' ? parsed : {}) as { app?: unknown };
    const command = parseSteerCommand(rest);
    if (!command.ok) return { status: 400, answer: refusal('invalid_command', command.problem) };
    if (STEERING_OPS.has(command.command.op)) {
      if (!this.token) return { status: 403, answer: refusal('read_only') };
      const given = request.headers[TOKEN_HEADER];
      if (!this.tokenMatches(Array.isArray(given) ? given[0] : given)) return { status: 401, answer: refusal('unauthorized') };
    }
    const socket = typeof app === 'string' ? this.apps.get(app) : undefined;
    if (!socket || socket.readyState !== WebSocket.OPEN) return { status: 404, answer: refusal('unknown_app', JSON.stringify(app)) };
    const id = randomUUID();
    const answer = new Promise<SteerAnswer>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve({ ok: false, error: { code: 'timeout', message: `the application did not answer within ${ANSWER_TIMEOUT / 1000} s` } });
      }, ANSWER_TIMEOUT);
      this.waiting.set(id, { resolve, timer, from: socket });
    });
    socket.send(JSON.stringify({ type: STEER_COMMAND, id, command: command.command } satisfies SteerCommandMessage));
    return { status: 200, answer: await answer };
  }

  /** Answers every command still waiting (the server stops). */
  close(): void {
    for (const [id, waiting] of this.waiting) {
      clearTimeout(waiting.timer);
      waiting.resolve({ ok: false, error: { code: 'agent_stopped', message: 'the inspection server stopped before the application answered' } });
      this.waiting.delete(id);
    }
  }
}
