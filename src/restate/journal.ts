/**
 * What user code answered, as Restate journals it: plain JSON that turns back into the same
 * answer on replay. `result(...)` and `fail(...)` are marked with symbols JSON drops, and skills
 * an action asks to mount are code; both are written as tagged data and rebuilt on the way out
 * (skills by name, from the host's skills). A throw is journaled too: it is user code's answer,
 * not a transient failure for Restate to retry.
 *
 * No SDK, no I/O.
 */
import { fail, isActionFailure, isActionResult, result, unreadChanges, withUnreadChanges, type ActionChanges, type SkillHandle, type UnreadChanges } from '../core/action.js';
import { describeThrown } from '../core/errors.js';
import type { AnySkill } from '../core/skill.js';

type Mounting = SkillHandle | readonly [SkillHandle, Record<string, unknown>];
type NamedMounting = string | [string, Record<string, unknown>];

/** A journaled answer of user code. */
export type JournalEntry =
  | { kind: 'value'; value: unknown; undefined?: true }
  | {
      kind: 'result';
      output: unknown;
      state?: unknown;
      effects?: unknown[];
      mount?: NamedMounting[];
      unmount?: string[];
      replace?: string[];
      /** The skills it mounts could not all be read when it ran: a replay mounts them as bare names (and fails the same way). */
      unreadable?: true;
      /** What `result` could not read in its changes (a misspelled key): a replay is refused the same way. */
      unread?: UnreadChanges;
    }
  | { kind: 'failure'; reason: string; message: string; details?: Record<string, unknown> }
  | { kind: 'thrown'; name: string; message: string };

const nameOf = (skill: SkillHandle | string) => (typeof skill === 'string' ? skill : skill.name);

/** Writes what user code returned (or threw) as a journal entry. */
export function toEntry(answer: { returned: unknown } | { thrown: unknown }): JournalEntry {
  if ('thrown' in answer) return { kind: 'thrown', name: answer.thrown instanceof Error ? answer.thrown.name : 'Error', message: describeThrown(answer.thrown) };
  const value = answer.returned;
  if (isActionFailure(value)) return { kind: 'failure', reason: value.reason, message: value.message, ...(value.details ? { details: value.details } : {}) };
  if (isActionResult(value)) {
    const entry: JournalEntry = { kind: 'result', output: value.output === undefined ? null : value.output };
    if (value.state !== undefined) entry.state = value.state;
    if (value.effects !== undefined) entry.effects = [...value.effects];
    if (value.mount !== undefined) entry.mount = value.mount.map((m: Mounting) => (Array.isArray(m) ? [nameOf(m[0] as SkillHandle), m[1] as Record<string, unknown>] : nameOf(m as SkillHandle)));
    if (value.unmount !== undefined) entry.unmount = value.unmount.map(nameOf);
    if (value.replace !== undefined) entry.replace = value.replace.map(nameOf);
    const unread = unreadChanges(value);
    if (unread !== undefined) entry.unread = unread;
    return entry;
  }
  return value === undefined ? { kind: 'value', value: null, undefined: true } : { kind: 'value', value };
}

/** The answer a journal entry stands for: returns it, or throws what user code threw. */
export function fromEntry(entry: JournalEntry, skills: { get(name: string): AnySkill | undefined }): unknown {
  switch (entry.kind) {
    case 'value':
      return entry.undefined ? undefined : entry.value;
    case 'failure':
      return fail(entry.reason, entry.message, entry.details);
    case 'thrown': {
      const error = new Error(entry.message);
      error.name = entry.name;
      throw error;
    }
    case 'result': {
      // A skill the host does not know stays a bare handle: mounting it fails with a typed error.
      const skill = (name: string): SkillHandle => skills.get(name) ?? { kind: 'skill', name };
      const changes: ActionChanges = {};
      if (entry.state !== undefined) changes.state = entry.state as Partial<unknown>;
      if (entry.effects !== undefined) changes.effects = entry.effects as ActionChanges['effects'];
      if (entry.mount !== undefined) changes.mount = entry.mount.map((m) => (typeof m === 'string' ? skill(m) : ([skill(m[0]), m[1]] as const)));
      if (entry.unmount !== undefined) changes.unmount = entry.unmount;
      if (entry.replace !== undefined) changes.replace = entry.replace.map(skill);
      return withUnreadChanges(result(entry.output, changes), entry.unread);
    }
  }
}
