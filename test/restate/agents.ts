/**
 * Agents the Restate host tests serve (in a service process of their own) and run in-process:
 * a notebook (sync and async appends, one that throws), a tally skill to mount, and an action
 * that returns the effects it is given.
 */
import { z } from 'zod';
import { defineAction, defineAgent, defineSkill, result } from '../../src/index.js';

const notes = z.object({ items: z.array(z.string()).default([]) });

const append = defineAction({
  name: 'append',
  description: 'Append an item to the list; `delay` makes it async, `explode` makes it throw',
  input: z.object({ item: z.string(), delay: z.number().int().min(0).optional(), explode: z.boolean().optional() }),
  state: notes,
  run: async ({ item, delay, explode }, { skillState }) => {
    if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
    if (explode) throw new Error(`exploded on '${item}'`);
    const items = [...skillState.items, item];
    return result({ count: items.length }, { state: { items } });
  },
});

const listItems = defineAction({
  name: 'list_items',
  description: 'List the items',
  input: z.object({}),
  state: notes,
  run: (_params, { skillState }) => ({ items: skillState.items }),
});

export const notebook = defineSkill({
  name: 'notebook',
  schema: notes,
  actions: [append, listItems],
  routes: [
    { path: 'notes.add', target: { action: 'append' } },
    { path: 'notes.list', target: { action: 'list_items' } },
  ],
});

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
