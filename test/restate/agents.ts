/**
 * Agents the Restate host tests serve (in a service process of their own) and run in-process:
 * the runtime tests' notebook (sync and async appends, one that throws), a tally skill to mount,
 * an action that returns the effects it is given, a desk that answers a question in a later
 * step (a deferred reply), a model-driven agent on a scripted model, and a librarian that loads
 * the bundled document skills.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { EXAMPLE_SKILLS_DIR } from '../../src/manifest/discover.js';
import { conversation, createSkillRegistry, createSkillTools, defineAction, discoverSkills, defineAgent, defineSkill, Effects, fail, result, type AgentDefinition } from '../../src/index.js';
import { scriptedModel, type ScriptedCall, type ScriptedResponse } from '../../src/testing/index.js';
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

// ── A deferred reply: `desk.ask` is answered by a later `desk.answer` ──

const deskState = z.object({ waiting: z.string().nullable().default(null), asked: z.number().int().default(0), answered: z.number().int().default(0) });
const desk = defineSkill({
  name: 'desk',
  schema: deskState,
  actions: [
    defineAction({
      name: 'ask',
      description: 'Takes a question; its answer comes with the next desk.answer',
      input: z.object({ question: z.string() }),
      state: deskState,
      run: (_params, { signal, skillState }) => result({ queued: true }, { state: { waiting: signal?.id ?? null, asked: skillState.asked + 1 }, effects: [Effects.deferReply()] }),
    }),
    defineAction({
      name: 'answer',
      description: 'Answers the question waiting',
      input: z.object({ text: z.string() }),
      state: deskState,
      run: ({ text }, { skillState }) =>
        skillState.waiting === null
          ? fail('nothing_waiting', 'no question is waiting')
          : result({ sent: true }, { state: { waiting: null, answered: skillState.answered + 1 }, effects: [Effects.reply(text, {}, { to: skillState.waiting })] }),
    }),
  ],
  routes: [
    { path: 'desk.ask', target: { action: 'ask' } },
    { path: 'desk.answer', target: { action: 'answer' } },
  ],
});
export const Desk = defineAgent({ name: 'desk_agent', skills: [desk] });

// ── A model-driven agent: a ledger to add to, and a wire that needs approval ──

const ledgerState = z.object({ total: z.number().default(0), wired: z.number().default(0) });
const ledger = defineSkill({
  name: 'ledger',
  schema: ledgerState,
  actions: [
    defineAction({
      name: 'add',
      description: 'Adds two numbers to the ledger and returns the new total',
      input: z.object({ a: z.number(), b: z.number() }),
      state: ledgerState,
      run: ({ a, b }, { skillState }) =>
        a + b > 1000 ? fail('too_big', `${a + b} is more than the ledger takes at once`) : result({ total: skillState.total + a + b }, { state: { total: skillState.total + a + b } }),
    }),
    defineAction({
      name: 'census',
      description: 'Counts the atoms in the ledger (a number too big for JSON)',
      input: z.object({}),
      state: ledgerState,
      run: (_params, { skillState }) => result({ atoms: 10n ** 80n }, { state: { total: skillState.total + 1 } }),
    }),
    defineAction({
      name: 'label',
      description: 'Names the ledger (answers a string)',
      input: z.object({}),
      state: ledgerState,
      run: (_params, { skillState }) => result(`ledger of ${skillState.total}`),
    }),
    defineAction({
      name: 'wire',
      description: 'Wires money out of the ledger',
      input: z.object({ amount: z.number() }),
      state: ledgerState,
      needsApproval: true,
      run: ({ amount }, { skillState }) => result({ wired: skillState.wired + amount }, { state: { wired: skillState.wired + amount } }),
    }),
  ],
});

/** A clerk's one tool, which answers a string; no tool of the clerk needs approval. */
const clerkState = z.object({ labels: z.number().default(0) });
const clerk = defineSkill({
  name: 'clerk',
  schema: clerkState,
  actions: [
    defineAction({
      name: 'label',
      description: 'Names the ledger (answers a string)',
      input: z.object({}),
      state: clerkState,
      run: (_params, { skillState }) => result(`label ${skillState.labels + 1}`, { state: { labels: skillState.labels + 1 } }),
    }),
  ],
});

/**
 * An audit that takes 600 ms, longer than the `toolTimeout` of the agent that has it, unless its
 * `ctx.abortSignal` aborts first: it then stops early and counts the audit as `interrupted`.
 */
const auditState = z.object({ audited: z.number().default(0), interrupted: z.number().default(0) });
const auditor = defineSkill({
  name: 'auditor',
  schema: auditState,
  actions: [
    defineAction({
      name: 'audit',
      description: 'Audits the ledger (slowly)',
      input: z.object({}),
      state: auditState,
      run: async (_params, { skillState, abortSignal }) => {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 600);
          abortSignal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
        });
        const interrupted = skillState.interrupted + (abortSignal.aborted ? 1 : 0);
        return result({ audited: skillState.audited + 1 }, { state: { audited: skillState.audited + 1, interrupted } });
      },
    }),
  ],
});

/** The text of the conversation's latest user message, and the tool results after it. */
function lastExchange(call: ScriptedCall): { text: string; results: { toolName: string; output: { type: string; value?: unknown; reason?: string } }[] } {
  const prompt = call.messages;
  let i = prompt.length - 1;
  while (i >= 0 && prompt[i]!.role !== 'user') i--;
  const user = prompt[i];
  const text = user && Array.isArray(user.content) ? user.content.map((part) => ('text' in part ? part.text : '')).join('') : '';
  const results = prompt.slice(i + 1).flatMap((message) => (message.role === 'tool' ? (message.content as never[]) : []));
  return { text, results };
}

/**
 * How long a "slowly" answer (or one whose text has `word`) takes: 1.5 s, or, while the file
 * SKILLSTATE_TEST_HOLD names exists, until the process is killed (two minutes at most), so that a
 * test killing the process while the model answers does not race the answer on a loaded machine.
 * The restarted process, with the file gone, takes the 1.5 s.
 */
function slowDelay(text: string, word = 'slowly'): number {
  if (!text.includes(word)) return 0;
  const hold = process.env.SKILLSTATE_TEST_HOLD;
  return hold !== undefined && existsSync(hold) ? 120_000 : 1_500;
}

/**
 * A scripted model that answers from what it is sent (so a service process restarted mid-turn
 * gets the same answers): "add A and B" calls `add`, "wire N" calls `wire`, then it reports the
 * tool's result in words (after 1.5 s when the message says "slowly"). Tool call ids follow the
 * prompt's length, so they repeat on a replay. "break" makes the provider fail (HTTP 503);
 * "teleport" asks for a tool that does not exist, "garble" gives `add` arguments of the wrong type,
 * "census" calls a tool whose output is not JSON, "thrice" asks for three additions at once, "fixed temperature" answers with a provider warning.
 * "style check" says whether the house style is in
 * the system prompt. "load NAME" loads a document skill. "greet NAME" loads the greeting skill its system
 * prompt discloses, then greets with the tool that skill brings. Asked for a summary of the
 * history, it gives one (as slowly as a "slowly" answer when the history asks for a "slow summary").
 */
function ledgerModel(call: ScriptedCall): ScriptedResponse {
  if (call.system.startsWith('Summarise this conversation')) return { delay: slowDelay(lastExchange(call).text, 'slow summary'), text: `earlier: ${call.messages.length} message(s)` };
  const { text, results } = lastExchange(call);
  const id = `call-${call.messages.length}`;
  const last = results.at(-1);
  if (last === undefined) {
    if (text.includes('break')) return { error: { status: 503, message: 'the provider is down' } };
    if (text.includes('fixed temperature')) return { text: 'Noted.', warnings: ['temperature is fixed for this model'] };
    const add = /add (\d+) and (\d+)/.exec(text);
    if (add) return { text: 'Adding.', toolCalls: [{ tool: 'add', args: { a: Number(add[1]), b: Number(add[2]) }, id }] };
    if (text.includes('thrice')) return { toolCalls: [1, 2, 3].map((n) => ({ tool: 'add', args: { a: n, b: 0 }, id: `${id}-${n}` })) };
    if (text.includes('audit')) return { toolCalls: [{ tool: 'audit', args: {}, id }] };
    if (text.includes('census')) return { toolCalls: [{ tool: 'census', args: {}, id }] };
    if (text.includes('label')) return { toolCalls: [{ tool: 'label', args: {}, id }] };
    if (text.includes('teleport')) return { toolCalls: [{ tool: 'teleport', args: {}, id }] };
    if (text.includes('garble')) return { toolCalls: [{ tool: 'add', args: { a: 'two', b: 3 }, id }] };
    const wire = /wire (\d+)/.exec(text);
    if (wire) return { toolCalls: [{ tool: 'wire', args: { amount: Number(wire[1]) }, id }] };
    // "style check": whether the house style's body (loaded earlier) is in the system prompt.
    if (text.includes('style check')) return { delay: slowDelay(text), text: call.system.includes('Write notes in lower case') ? 'styled' : 'unstyled' };
    const load = /^load ([\w-]+)$/.exec(text);
    if (load) return { toolCalls: [{ tool: 'load_skill', args: { name: load[1]! }, id }] };
    const greet = /greet (\w+)/.exec(text);
    if (greet) {
      // The greeting skill is loaded when the disclosure in the system prompt offers it.
      if (!call.system.includes('hello-extended') || !call.tools.includes('load_skill')) return { text: 'No greeting skill is offered.' };
      return { toolCalls: [{ tool: 'load_skill', args: { name: 'hello-extended' }, id }] };
    }
    return { text: `You said: ${text}` };
  }
  if (last.toolName === 'load_skill' && text.startsWith('load ')) return { text: `Loaded ${text.slice('load '.length)}.` };
  if (last.toolName === 'load_skill') {
    // The loaded skill's tools are offered at the next step, and its body is in the system prompt.
    if (!call.tools.includes('say_hello') || !call.system.includes('# Hello Extended Skill')) return { text: `say_hello is not offered (tools: ${call.tools.join(', ')}).` };
    return { delay: slowDelay(text), toolCalls: [{ tool: 'say_hello', args: { name: /greet (\w+)/.exec(text)![1]! }, id }] };
  }
  // "slowly": the answer after the tool takes a while (a test kills the service process meanwhile).
  const delay = slowDelay(text);
  if (last.output.type === 'execution-denied') return { text: `The ${last.toolName} was denied.` };
  if (last.output.type === 'text') return { text: `The ${last.toolName} said, as text: ${String(last.output.value)}` };
  if (last.output.type !== 'json') return { text: `The ${last.toolName} failed: ${String(last.output.value)}` };
  const value = last.output.value as { total?: number; wired?: number };
  if (last.toolName === 'say_hello') return { text: `Greeted: ${(last.output.value as { output: string }).output}` };
  return { delay, text: last.toolName === 'add' ? `The total is ${value.total}.` : `Wired; ${value.wired} out so far.` };
}

/**
 * The AI SDK's mock model scripted with one of its methods, as a newcomer writes it: it says
 * "Heard you.", or summarises when asked to.
 */
function oneMethodModel(method: 'doGenerate' | 'doStream') {
  const text = (prompt: { role: string; content: unknown }[]) => (String(prompt[0]?.content).startsWith('Summarise') ? 'earlier: a summary' : 'Heard you.');
  const usage = { inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } };
  const finishReason = { unified: 'stop' as const, raw: 'stop' };
  if (method === 'doGenerate') return new MockLanguageModelV3({ modelId: 'generating', doGenerate: async ({ prompt }) => ({ content: [{ type: 'text', text: text(prompt) }], finishReason, usage, warnings: [] }) });
  return new MockLanguageModelV3({
    modelId: 'streaming',
    doStream: async ({ prompt }) => ({
      stream: new ReadableStream({
        start(controller) {
          controller.enqueue({ type: 'stream-start', warnings: [] });
          // The stream protocol: a text part opens, takes its deltas, and ends.
          controller.enqueue({ type: 'text-start', id: 't' });
          controller.enqueue({ type: 'text-delta', id: 't', delta: text(prompt) });
          controller.enqueue({ type: 'text-end', id: 't' });
          controller.enqueue({ type: 'finish', usage, finishReason });
          controller.close();
        },
      }),
    }),
  });
}

/** The ledger model, except that a summary of the history costs 5,000 input tokens. */
function costlySummaries(call: ScriptedCall): ScriptedResponse {
  const response = ledgerModel(call);
  return call.system.startsWith('Summarise this conversation') ? { ...response, usage: { inputTokens: 5_000, outputTokens: 40 } } : { ...response, usage: { inputTokens: 10, outputTokens: 10 } };
}

/** The models both hosts give their model-driven agents. */
export const models = {
  default: scriptedModel([ledgerModel], { loop: true, modelId: 'ledger' }),
  generating: oneMethodModel('doGenerate'),
  streaming: oneMethodModel('doStream'),
  costly: scriptedModel([costlySummaries], { loop: true, modelId: 'costly' }),
};

/** The compactors both hosts are given: one returns what a compactor must not (a summary that is a number). */
export const compactors = { numeric: () => ({ summary: 42 }) as never };
export const Chatter = defineAgent({ name: 'chatter', skills: [[conversation, { instructions: 'You keep a ledger.', stream: false, retries: 1, retryDelay: 20, maxToolCalls: 2 }], ledger] });
/** The same agent with a small history: older turns are summarised by the model. */
export const Forgetful = defineAgent({
  name: 'forgetful',
  skills: [[conversation, { instructions: 'You keep a ledger.', stream: false, history: { maxTokens: 120, keepTurns: 1, strategy: 'summarize' } }], ledger],
});
/** An agent whose only tool answers a string, and none needs approval. */
export const Clerk = defineAgent({ name: 'clerk_agent', skills: [[conversation, { stream: false }], clerk] });
/** A model call that fails is tried again after a minute: a cancel comes while the turn waits to retry. */
export const Patient = defineAgent({ name: 'patient', skills: [[conversation, { instructions: 'You keep a ledger.', stream: false, retries: 2, retryDelay: 60_000 }], ledger] });
/** A small token budget, and a history summarised by a model whose summaries cost more than it. */
export const Thrifty = defineAgent({ name: 'thrifty', skills: [[conversation, { model: 'costly', stream: false, maxTokens: 1_000, history: { maxTokens: 30, keepTurns: 1, strategy: 'summarize' } }], ledger] });
/** A small history compacted by a compactor that returns a number. */
export const Sloppy = defineAgent({ name: 'sloppy', skills: [[conversation, { stream: false, history: { maxTokens: 30, keepTurns: 1, strategy: 'numeric' } }], ledger] });
/** The same agent asking for a model no host has. */
export const Stranded = defineAgent({ name: 'stranded', skills: [[conversation, { model: 'elsewhere', stream: false }], ledger] });

/** Agents on a model that only generates (streaming left on) and one that only streams (streaming off, a small history summarised). */
export const Generating = defineAgent({ name: 'generating', skills: [[conversation, { model: 'generating' }]] });
export const Streaming = defineAgent({ name: 'streaming', skills: [[conversation, { model: 'streaming', stream: false, history: { maxTokens: 30, keepTurns: 1, strategy: 'summarize' } }]] });

/** The same agent with an audit that takes longer than its tool calls may. */
export const Hasty = defineAgent({ name: 'hasty', skills: [[conversation, { stream: false, toolTimeout: 200 }], ledger, auditor] });

// ── A skill only a definition's own registry knows ──

const stampState = z.object({ stamps: z.number().int().default(0) });
const stampSkill = defineSkill({
  name: 'stamp',
  schema: stampState,
  actions: [
    defineAction({
      name: 'stamp',
      description: 'Adds a stamp',
      input: z.object({}),
      state: stampState,
      run: (_params, { skillState }) => result(skillState.stamps + 1, { state: { stamps: skillState.stamps + 1 } }),
    }),
  ],
});
const mountStamp = defineAction({ name: 'mount_stamp', description: 'Mounts the stamp skill', input: z.object({}), run: () => result('mounted', { mount: [stampSkill] }) });
/** An agent whose definition's own registry holds `stamp`: mounted by an action, or by name. */
export const Registered = defineAgent({
  name: 'registered',
  skills: [notebook],
  actions: [mountStamp],
  routes: [{ path: 'stamp.mount', target: { action: 'mount_stamp' } }],
  registry: createSkillRegistry([stampSkill]),
});

/** A conversation mounted at run time, whose model calls may take five minutes: longer than any definition's conversation allows. */
const mountConversation = defineAction({
  name: 'mount_conversation',
  description: 'Mounts a conversation with a long modelTimeout',
  input: z.object({}),
  run: () => result('mounted', { mount: [[conversation, { stream: false, modelTimeout: 300_000 }]] }),
});
/** A ledger keeper that gets its conversation by an action (its definition's registry knows the skill). */
export const Latecomer = defineAgent({
  name: 'latecomer',
  skills: [ledger],
  actions: [mountConversation],
  routes: [{ path: 'conversation.mount', target: { action: 'mount_conversation' } }],
  registry: createSkillRegistry([conversation]),
});

// ── A watcher: notes the tool progress signals it gets (from the agents it subscribed to) ──

const watchState = z.object({
  seen: z.array(z.object({ type: z.string(), agent: z.string(), tool: z.string(), toolCallId: z.string(), ok: z.boolean().optional(), preApprovedBy: z.string().optional() })).default([]),
});
const watch = defineSkill({
  name: 'watch',
  schema: watchState,
  actions: [
    defineAction({
      name: 'note',
      description: 'Notes a tool progress signal',
      input: z.object({ agent: z.string(), tool: z.string(), toolCallId: z.string(), ok: z.boolean().optional(), preApprovedBy: z.string().optional() }).passthrough(),
      state: watchState,
      run: ({ agent, tool, toolCallId, ok, preApprovedBy }, { signal, skillState }) =>
        result(null, {
          state: { seen: [...skillState.seen, { type: signal!.type, agent, tool, toolCallId, ...(ok !== undefined ? { ok } : {}), ...(preApprovedBy !== undefined ? { preApprovedBy } : {}) }] },
        }),
    }),
  ],
  routes: [{ path: 'chat.tool.*', target: { action: 'note' } }],
});
export const Watcher = defineAgent({ name: 'watcher', skills: [watch] });

// ── Document skills: an agent that loads the bundled example skills with its skill tools ──

/** The bundled example skills (hello-extended, csv-tools), discovered from their folders. */
export const library = await discoverSkills({ bundled: EXAMPLE_SKILLS_DIR });
export const Librarian = defineAgent({ name: 'librarian', skills: [[conversation, { instructions: 'You greet people.', stream: false }], createSkillTools(library)] });

/**
 * allowed-tools: `treasury` pre-approves the ledger's `wire` (and names tools the agent does not
 * have, or cannot apply a specifier to); `shady` would too, but it comes from a project folder
 * nobody trusted.
 */
const treasury = await discoverSkills({ project: fileURLToPath(new URL('skills', import.meta.url)), user: false, bundled: false }, { trust: (entry) => entry.name !== 'shady' });
export const Treasurer = defineAgent({
  name: 'treasurer',
  skills: [[conversation, { instructions: 'You keep a ledger.', stream: false }], ledger, createSkillTools(treasury)],
  registry: treasury,
});

/**
 * A folder of skills a test makes, hides and brings back (SKILLSTATE_TEST_SKILLS, set by the
 * Restate host tests for their service process): the scratcher loads them.
 */
const scratchFolder = process.env.SKILLSTATE_TEST_SKILLS;
const scratchLibrary = scratchFolder ? await discoverSkills({ project: false, user: false, bundled: false, extra: [scratchFolder] }) : undefined;
const Scratcher = scratchLibrary
  ? defineAgent({
      name: 'scratcher',
      skills: [[conversation, { instructions: 'You write notes.', stream: false }], notebook, createSkillTools(scratchLibrary)],
      // Its own registry reads skills from folders too: which of them a process has read differs.
      registry: scratchLibrary,
      // Takes a second: a test kills the service process while it runs.
      actions: [defineAction({ name: 'linger', description: 'Waits a second', input: z.object({}), run: () => new Promise((resolve) => setTimeout(() => resolve(result('lingered')), 1_000)) })],
    })
  : undefined;

export const definitions: readonly AgentDefinition<object>[] = [Worker, NotesAgent, Desk, Chatter, Patient, Clerk, Thrifty, Sloppy, Forgetful, Stranded, Generating, Streaming, Hasty, Librarian, Watcher, Registered, Latecomer, Treasurer, ...(Scratcher ? [Scratcher] : [])];
/** A code skill that needs the house style (a document skill) mounted first. */
const annotator = defineSkill({
  name: 'annotator',
  requires: ['house-style'],
  actions: [defineAction({ name: 'annotate', description: 'Annotates a note', input: z.object({}), run: () => result('annotated') })],
});
export const skills = [tally, annotator];
/** Where skills are found by name besides `skills`: the bundled document skills. */
export const resolvers = [library];

