/**
 * Agents the Restate host tests serve (in a service process of their own) and run in-process:
 * the runtime tests' notebook (sync and async appends, one that throws), a tally skill to mount,
 * and an action that returns the effects it is given.
 */
import { z } from 'zod';
import { defineAction, defineAgent, defineSkill, result } from '../../src/index.js';
import { notebook } from '../runtime/fixtures.js';

const tallyState = z.object({ count: z.number().int().default(0) });
const bump = defineAction({
  name: 'bump',
  description: 'Add one to the tally',
  input: z.object({}),
  state: tallyState,
  run: (_params, { skillState }) => result(skillState.count + 1, { state: { count: skillState.count + 1 } }),
});

/** A skill no definition attaches: agents get it by mounting it. */
export const tally = defineSkill({ name: 'tally', schema: tallyState, actions: [bump], routes: [{ path: 'tally.bump', target: { action: 'bump' } }] });

const perform = defineAction({
  name: 'perform',
  description: 'Return the effects it is given',
  input: z.object({ effects: z.array(z.any()).default([]), output: z.unknown().optional() }),
  run: ({ effects, output }) => result(output ?? 'done', { effects }),
});

/** A notebook that also performs the effects a `do` signal carries. */
export const Worker = defineAgent({ name: 'worker', skills: [notebook], actions: [perform], routes: [{ path: 'do', target: { action: 'perform' } }] });
export const NotesAgent = defineAgent({ name: 'notes_agent', skills: [notebook] });

export const definitions = [Worker, NotesAgent];
export const skills = [tally];

