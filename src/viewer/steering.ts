/**
 * Steering from the studio: the commands a page may ask an application to carry out, and the
 * messages that carry them between the inspection server and the application. Pure: no sockets.
 *
 * The page posts a command to the server (`POST /local/steer`); the server checks it (steering on,
 * the session token, a loopback Host, the page's own Origin) and passes it to the application it
 * names over that application's socket; the application, if it opted in too, carries it out on
 * its agent system and answers. `describe` only reads (the agents' skills, actions, input schemas
 * and routes): it needs no token and works read-only.
 */

/** A signal as the page writes it: a type and, optionally, its data. */
export interface SteerSignal {
  type: string;
  data?: unknown;
}

/** What a page may ask of an application. */
export type SteerCommand =
  | { op: 'describe' }
  | { op: 'send'; agent: string; signal: SteerSignal }
  | { op: 'call'; agent: string; signal: SteerSignal }
  | { op: 'run'; agent: string; action: string; skill?: string; params: Record<string, unknown> }
  | { op: 'mount'; agent: string; skill: string }
  | { op: 'unmount'; agent: string; skill: string }
  | { op: 'stop'; agent: string };

/** The operations that change something: refused unless steering is on, and only with the token. */
export const STEERING_OPS: ReadonlySet<string> = new Set(['send', 'call', 'run', 'mount', 'unmount', 'stop']);

/** The answer to a command: its value, or why it was refused or failed (a stable code and words). */
export type SteerAnswer = { ok: true; value: unknown } | { ok: false; error: { code: string; message: string; [key: string]: unknown } };

/** The server to an application: carry out `command` and answer with the same `id`. */
export const STEER_COMMAND = '@skillstate.command';
/** An application to the server: the answer to command `id`. */
export const STEER_ANSWER = '@skillstate.answer';
/**
 * An application to the viewers: a piece of a model's answer as it is written (a `chat.delta`
 * signal), `{ agent, turn, step, text }`. Sent only while steering is on and nothing is redacted.
 */
export const CHAT_DELTA = '@skillstate.delta';

export interface SteerCommandMessage {
  type: typeof STEER_COMMAND;
  id: string;
  command: SteerCommand;
}

export type SteerAnswerMessage = { type: typeof STEER_ANSWER; id: string } & SteerAnswer;

/** An action as a page shows it, with the JSON Schema its form is generated from. */
export interface DescribedAction {
  name: string;
  description: string;
  /** The skill providing it; absent for the agent's own actions. */
  skill?: string;
  input: Record<string, unknown>;
}

/**
 * A skill that may be mounted on an agent by name, as the page offers it: its description (for a
 * document skill, the text a model is disclosed) and where the name is found — the agent's
 * definition, a registry of code skills, a registry of document skills, or an MCP server.
 */
export interface MountableSkill {
  name: string;
  description: string;
  from: 'definition' | 'registry' | 'documents' | 'mcp';
}

/** A running agent as the page's steering panel shows it. */
export interface DescribedAgent {
  id: string;
  definition: string;
  /**
   * The agent's status (`ref.getSnapshot().status`): the page shows `'active'` as running, and
   * any other (`'stopped'`, `'passivated'`...) as a badge, with no steering controls.
   */
  status: string;
  mounted: string[];
  actions: DescribedAction[];
  routes: { path: string; skill?: string; target: unknown }[];
  /** Skills that may be mounted by name and are not mounted: the definition's own, its registry's, the system's and its resolvers'. */
  mountable: MountableSkill[];
}

/** Refusals of the steering protocol itself (before any agent is involved), by code. */
export const STEER_REFUSALS = {
  read_only: 'steering is off: start the inspector with interactive: true (or skillstate inspect --interactive)',
  unauthorized: "the session token is missing or wrong: open the page from the URL the inspector printed (it carries '#token=...')",
  foreign_origin: 'refused: only the pages of this server may steer',
  unknown_app: 'no application is connected under that id',
  not_attached: 'no agent system is attached to that application: call inspector.attach(system)',
  invalid_command: 'not a steering command',
  over_websocket: 'steering goes through POST /local/steer with the session token, never over the socket',
} as const;

export type SteerRefusal = keyof typeof STEER_REFUSALS;

/** A refusal as an answer: its code and the words above, with what was wrong when there is more to say. */
export function refusal(code: SteerRefusal, detail?: string): SteerAnswer {
  return { ok: false, error: { code, message: detail ? `${STEER_REFUSALS[code]}: ${detail}` : STEER_REFUSALS[code] } };
}

const string = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';
const record = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `value` as a command, or what is wrong with it. */
export function parseSteerCommand(value: unknown): { ok: true; command: SteerCommand } | { ok: false; problem: string } {
  if (!record(value) || typeof value.op !== 'string') return { ok: false, problem: "a command is an object with an 'op'" };
  const { op } = value;
  if (op === 'describe') return { ok: true, command: { op } };
  if (!STEERING_OPS.has(op)) return { ok: false, problem: `unknown op ${JSON.stringify(op)}: one of describe, ${[...STEERING_OPS].join(', ')}` };
  if (!string(value.agent)) return { ok: false, problem: `${op} needs 'agent' (an agent id)` };
  const agent = value.agent;
  switch (op) {
    case 'send':
    case 'call': {
      const signal = value.signal;
      if (!record(signal) || !string(signal.type)) return { ok: false, problem: `${op} needs 'signal' with a 'type'` };
      return { ok: true, command: { op, agent, signal: 'data' in signal ? { type: signal.type, data: signal.data } : { type: signal.type } } };
    }
    case 'run': {
      if (!string(value.action)) return { ok: false, problem: "run needs 'action' (an action name)" };
      if (value.params !== undefined && !record(value.params)) return { ok: false, problem: "run's 'params' must be an object" };
      if (value.skill !== undefined && !string(value.skill)) return { ok: false, problem: "run's 'skill' must be a skill name" };
      return { ok: true, command: { op, agent, action: value.action, params: (value.params as Record<string, unknown>) ?? {}, ...(value.skill ? { skill: value.skill as string } : {}) } };
    }
    case 'mount':
    case 'unmount':
      if (!string(value.skill)) return { ok: false, problem: `${op} needs 'skill' (a skill name)` };
      return { ok: true, command: { op, agent, skill: value.skill } };
    default:
      return { ok: true, command: { op: 'stop', agent } };
  }
}
