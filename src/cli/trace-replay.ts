/**
 * A recorded trace (the JSON lines of `createAgentSystem({ trace })`) as inspection messages, so
 * the viewers show a post-mortem the way they show a live system: agents and their skill
 * lifecycle actors, each drawn from the machine definitions given, and the event log.
 *
 * Pure: parses text, no I/O. A line that is not a trace record is an error naming its number.
 */
import { SkillstateError } from '../core/errors.js';
import type { TraceLine } from '../runtime/trace.js';
import type { InspectionMessage } from '../viewer/messages.js';

/** The machine definitions (their configs as JSON text) the actors of a trace are drawn with. */
export interface TraceMachines {
  agent: string;
  lifecycle: string;
}

/** A trace file that cannot be read as one. */
export class TraceError extends SkillstateError {}

/** Each kind of record, and the fields it must have (`name:type`; `?` when it may be missing). */
const KINDS: Record<string, readonly string[]> = {
  spawn: ['agent:string', 'definition:string'],
  stop: ['agent:string', 'reason:string'],
  signal: ['agent:string', 'type:string'],
  step: ['agent:string', 'item:string', 'subject:string', 'ok:boolean'],
  effect: ['agent:string', 'effect:object'],
  lifecycle: ['agent:string', 'skill:string', 'state:string'],
  diagnostic: ['agent?:string', 'diagnostic:object'],
  turn: ['agent:string', 'turn:number', 'state:string'],
  passivate: ['agent:string'],
  wake: ['agent:string'],
  revert: ['agent:string', 'reason:string'],
};

/** A record whose payload JSON could not encode: written with its kind, its agent and why. */
interface UnencodableLine {
  time: string;
  kind: string;
  agent?: string;
  unencodable: string;
}

/** What a record lacks, or undefined when it has every field its kind needs. */
function recordProblem(line: Record<string, unknown>, fields: readonly string[]): string | undefined {
  for (const field of fields) {
    const [name, type] = field.split(':') as [string, string];
    const optional = name.endsWith('?');
    const key = optional ? name.slice(0, -1) : name;
    const value = line[key];
    if (value === undefined && optional) continue;
    if (typeof value !== type || value === null) return `${/^[aeiou]/.test(String(line.kind)) ? 'an' : 'a'} ${String(line.kind)} record needs '${key}' (${type})`;
  }
  if (line.kind === 'effect' && typeof (line.effect as { type?: unknown }).type !== 'string') return "an effect record needs 'effect.type' (string)";
  if (line.kind === 'diagnostic' && typeof (line.diagnostic as { code?: unknown }).code !== 'string') return "a diagnostic record needs 'diagnostic.code' (string)";
  return undefined;
}

/**
 * `text` up to a last line its writer did not finish, and that line's number: a process killed
 * while writing its trace leaves one, with no newline after it and not JSON. The trace of a crash
 * is read up to there rather than refused.
 */
export function withoutCutShortLine(text: string): { text: string; cutShort?: number } {
  if (text.endsWith('\n')) return { text };
  const start = text.lastIndexOf('\n') + 1;
  const last = text.slice(start);
  if (!last.trim()) return { text };
  try {
    JSON.parse(last);
    return { text };
  } catch {
    const complete = text.slice(0, start);
    return { text: complete, cutShort: complete.split('\n').length };
  }
}

/** Parses JSON-lines text into trace lines; blank lines are skipped. */
export function parseTrace(text: string, source = 'the trace'): TraceLine[] {
  const lines: TraceLine[] = [];
  const refuse = (index: number, what: string) => new TraceError({ code: 'invalid_trace', message: `${source}, line ${index + 1}: ${what}`, subject: `${source}:${index + 1}` });
  for (const [index, raw] of text.split('\n').entries()) {
    if (!raw.trim()) continue;
    let line: unknown;
    try {
      line = JSON.parse(raw);
    } catch (error) {
      throw refuse(index, `not JSON (${error instanceof Error ? error.message : String(error)})`);
    }
    const record = (typeof line === 'object' && line !== null ? line : {}) as Record<string, unknown>;
    const kind = record.kind;
    if (typeof kind !== 'string' || !Object.hasOwn(KINDS, kind)) {
      throw refuse(index, `not a trace record (kind ${JSON.stringify(kind)}; expected one of ${Object.keys(KINDS).join(', ')})`);
    }
    // A record written without its payload (JSON could not encode it) is kept as such.
    const problem = typeof record.unencodable === 'string' ? undefined : recordProblem(record, KINDS[kind]!);
    if (problem) throw refuse(index, problem);
    lines.push(line as TraceLine);
  }
  return lines;
}

const agentSession = (agent: string) => `agent:${agent}`;
const skillSession = (agent: string, skill: string) => `agent:${agent}/skills/${skill}`;
const LIFECYCLE_EVENTS: Record<string, string> = { active: 'activate', inactive: 'deactivate', failed: 'failed' };

/** The messages a live inspector would have streamed for this trace, as near as a trace tells. */
export function traceToMessages(lines: readonly TraceLine[], machines: TraceMachines): InspectionMessage[] {
  const messages: InspectionMessage[] = [];
  const known = new Set<string>();
  const skillStates = new Map<string, string>();
  for (const line of lines) {
    const createdAt = String(Date.parse(line.time) || Date.now());
    const event = (sessionId: string, payload: { type: string; [key: string]: unknown }) => messages.push({ type: '@xstate.event', sessionId, event: payload, createdAt });
    const ensureAgent = (agent: string, parent?: string) => {
      const sessionId = agentSession(agent);
      if (known.has(sessionId)) return sessionId;
      known.add(sessionId);
      messages.push({ type: '@xstate.actor', sessionId, name: agent, parentId: parent === undefined ? undefined : agentSession(parent), definition: machines.agent, snapshot: { status: 'active', value: {} }, createdAt });
      return sessionId;
    };
    const unencodable = line as unknown as Partial<UnencodableLine>;
    if (typeof unencodable.unencodable === 'string') {
      if (unencodable.agent !== undefined) event(ensureAgent(unencodable.agent), { type: `${line.kind}.unencodable`, reason: unencodable.unencodable });
      continue;
    }
    switch (line.kind) {
      case 'turn':
        event(ensureAgent(line.agent), { type: `turn.${line.state}`, turn: line.turn });
        break;
      case 'spawn':
        event(ensureAgent(line.agent, line.parent), { type: line.restored ? 'restore' : 'spawn', definition: line.definition });
        break;
      case 'stop': {
        const sessionId = ensureAgent(line.agent);
        event(sessionId, { type: 'stop', reason: line.reason });
        messages.push({ type: '@xstate.snapshot', sessionId, snapshot: { status: 'stopped', value: {} }, event: { type: 'stop' }, createdAt });
        for (const [key] of skillStates) {
          if (key.startsWith(`${sessionId}/skills/`)) messages.push({ type: '@xstate.snapshot', sessionId: key, snapshot: { status: 'stopped', value: skillStates.get(key) }, event: { type: 'stop' }, createdAt });
        }
        break;
      }
      case 'passivate':
      case 'wake':
        // The agent left memory for its store, or came back from it: the same agent, not stopped.
        event(ensureAgent(line.agent), { type: line.kind });
        break;
      case 'revert':
        // Brought back to its last durable state: the same agent, not stopped.
        event(ensureAgent(line.agent), { type: 'revert', reason: line.reason });
        break;
      case 'signal':
        event(ensureAgent(line.agent), { type: 'signal', signal: { type: line.type, id: line.id }, call: line.call });
        break;
      case 'step': {
        const onSkill = line.item === 'mount' || line.item === 'unmount';
        event(ensureAgent(line.agent), { type: onSkill ? line.item : `step.${line.item}`, ...(onSkill ? { skill: line.subject } : { subject: line.subject }), ok: line.ok, ...(line.error ? { error: line.error.code } : {}) });
        break;
      }
      case 'effect':
        event(ensureAgent(line.agent), { type: `effect.${line.effect.type}`, ...(line.effect.meta?.skill ? { skill: line.effect.meta.skill } : {}), effect: line.effect });
        break;
      case 'diagnostic':
        if (line.agent !== undefined) event(ensureAgent(line.agent), { type: `diagnostic.${line.diagnostic.code}`, ...(line.diagnostic.skill ? { skill: line.diagnostic.skill } : {}), message: line.diagnostic.message });
        break;
      case 'lifecycle': {
        const parentId = ensureAgent(line.agent);
        const sessionId = skillSession(line.agent, line.skill);
        if (!known.has(sessionId)) {
          known.add(sessionId);
          messages.push({ type: '@xstate.actor', sessionId, name: `skill:${line.skill}`, parentId, definition: machines.lifecycle, snapshot: { status: 'active', value: line.state }, createdAt });
        } else {
          const type = line.restarted ? 'restart' : (LIFECYCLE_EVENTS[line.state] ?? line.state);
          event(sessionId, { type, ...(line.restarted ? { child: line.restarted.child, reason: line.restarted.reason } : {}), ...(line.error ? { error: line.error.code } : {}) });
          messages.push({ type: '@xstate.snapshot', sessionId, snapshot: { status: 'active', value: line.state }, event: { type }, createdAt });
        }
        skillStates.set(sessionId, line.state);
        break;
      }
    }
  }
  return messages;
}
