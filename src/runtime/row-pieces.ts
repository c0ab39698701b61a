/**
 * An agent's row text in the pieces it is put together from, for a store that writes it on
 * another thread. From step to step most of a row stays the same: its head (the format, the ids and
 * definitions) is a function of the agent's id and definition, its body (the mounted skills, their
 * lifecycles, the child agents) is shared by the agents of a definition, and its end names the
 * parent. Only the state changes at every step. A store that knows these pieces sends the state
 * and refers to the rest, and puts the text together where it writes it: the text is the same,
 * the thread that takes the steps copies a tenth of it.
 *
 * The text is the one `JSON.stringify` writes of the agent's snapshot (see `storedRow`):
 *
 *   head                                        state      body                                           end
 *   {"format":…,"id":…,"definition":…,"agent":{…,"state": {…}  ,"mounted":[…]},"lifecycles":{…},"children":[…] ,"parent":…}
 */
/** The head of a row, between its ids and definitions (each as JSON text): see `headText`. */
export const HEAD_PIECES = ['{"format":"skillstate/agent@1","id":', ',"definition":', ',"agent":{"id":', ',"definition":', ',"state":'] as const;

/** The head of a row (everything before the state) of agent `id` of `definition`, whose agent value has `agentId` and `agentDefinition`. */
export function headText(id: string, definition: string, agentId: string, agentDefinition: string): string {
  return `${HEAD_PIECES[0]}${JSON.stringify(id)}${HEAD_PIECES[1]}${JSON.stringify(definition)}${HEAD_PIECES[2]}${JSON.stringify(agentId)}${HEAD_PIECES[3]}${JSON.stringify(agentDefinition)}${HEAD_PIECES[4]}`;
}

/** The end of the row of an agent with `parent` (none: undefined), not starting and with nothing scheduled. */
export function standardEnd(parent: string | undefined): string {
  return parent === undefined ? '}' : `,"parent":${JSON.stringify(parent)}}`;
}

/** A row's text in pieces: `head + state + body + end`. */
export interface RowPieces {
  /** Undefined when it is `headText(id, definition, id, definition)` of the row's own id and definition (as every spawned agent's is). */
  readonly head: string | undefined;
  readonly state: string;
  /** The same string from step to step while the mounted skills, their lifecycles and the children stay the same. */
  readonly body: string;
  /** Undefined when it is `standardEnd(parent)` of the row's own parent. */
  readonly end: string | undefined;
}

/** Where a row made by `storedRow` keeps its pieces (a symbol: a store that does not know them sees a plain stored row). */
export const ROW_PIECES: unique symbol = Symbol('skillstate.rowPieces');
