/**
 * A small domain for the model-testing tests: a tickets skill (open a ticket, get its id, list
 * them) with a reference model of what it should do, and variants of the skill each carrying
 * one planted bug the model test must catch.
 */
import { z } from 'zod';
import { createSignal, defineAction, defineAgent, defineSkill, Decision, result, type ModelStep, type ReferenceModel } from './support.js';

const ticketState = z.object({
  nextId: z.number().int().positive().default(1),
  open: z.array(z.object({ id: z.number().int().positive(), title: z.string() })).default([]),
});
type Tickets = z.output<typeof ticketState>;

/** The bugs a tickets skill can carry. */
export type Bug = 'none' | 'ids never increment' | 'action fails its schema' | 'in-place mutation' | 'slice overwritten with garbage';

export function ticketsSkill(bug: Bug = 'none') {
  const openTicket = defineAction({
    name: 'open_ticket',
    description: 'Open a ticket and return its id',
    input: z.object({ title: z.string() }),
    state: ticketState,
    run: ({ title }, { skillState }) => {
      const id = skillState.nextId;
      if (bug === 'in-place mutation') {
        // Changes the committed slice instead of returning a new one.
        (skillState.open as Tickets['open']).push({ id, title });
        (skillState as Tickets).nextId = id + 1;
        return result({ id }, { state: { open: skillState.open, nextId: skillState.nextId } });
      }
      const nextId = bug === 'ids never increment' ? id : bug === 'action fails its schema' ? -1 : id + 1;
      return result({ id }, { state: { nextId, open: [...skillState.open, { id, title }] } });
    },
  });
  const listTickets = defineAction({
    name: 'list_tickets',
    description: 'The open tickets',
    input: z.object({}),
    state: ticketState,
    run: (_params, { skillState }) => ({ ids: skillState.open.map((ticket) => ticket.id) }),
  });
  return defineSkill({
    name: 'tickets',
    schema: ticketState,
    actions: [openTicket, listTickets],
    routes: [
      { path: 'tickets.open', target: { action: 'open_ticket' } },
      { path: 'tickets.list', target: { action: 'list_tickets' } },
    ],
    signalPatterns: ['tickets.**'],
    // The garbage: a hook that answers `tickets.list` by writing something the schema refuses.
    handleSignal:
      bug === 'slice overwritten with garbage'
        ? (signal) => (signal.type === 'tickets.list' ? Decision.handle({ state: { open: 'garbage' } as unknown as Partial<Tickets>, output: { ids: [] } }) : Decision.continue())
        : undefined,
  });
}

/** What the tickets skill should do: ids count up from 1 while it stays mounted. */
export interface TicketModel {
  nextId: number;
  open: number;
}

export const ticketModel: ReferenceModel<TicketModel> = {
  initial: { nextId: 1, open: 0 },
  reduce(model, step: ModelStep) {
    if ('mount' in step && step.mount === 'tickets') return { nextId: 1, open: 0 };
    if ('signal' in step && step.signal === 'open') return { nextId: model.nextId + 1, open: model.open + 1 };
    return model;
  },
  agrees(model, state, mounted) {
    if (!mounted.includes('tickets')) return;
    const slice = state.tickets as Tickets;
    if (Array.isArray(slice.open) && slice.open.length !== model.open) return `${slice.open.length} tickets open, the model has ${model.open}`;
    return undefined;
  },
};

export const Desk = defineAgent({ name: 'desk' });

/** The signals of a tickets model test: `open` with its expectation from the model, `list` with none (it must succeed when routed). */
export const ticketSignals = {
  open: {
    signal: createSignal('tickets.open', { title: 'printer on fire' }),
    expect: (outcome: { ok: boolean; value?: unknown; error?: { code: string } }, mounted: readonly string[], model: TicketModel) => {
      if (!mounted.includes('tickets')) {
        if (outcome.ok || outcome.error?.code !== 'no_route') throw new Error(`expected no_route without the skill, got ${outcome.ok ? 'ok' : outcome.error?.code}`);
        return;
      }
      if (!outcome.ok) throw new Error(`opening failed: ${outcome.error?.code}`);
      const { id } = outcome.value as { id: number };
      if (id !== model.nextId) throw new Error(`opened ticket ${id}, the model expects ${model.nextId}`);
    },
  },
  list: { signal: createSignal('tickets.list') },
};
