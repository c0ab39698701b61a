/**
 * `skillstate chat`: a conversation, in the terminal, with an agent made of the discovered
 * document skills (the skill tools, and each skill's toolset once the model loads it). The answer
 * streams as it comes; tool calls, their results and the loaded skills are shown; running a
 * skill's script waits for a yes. `--model provider:model` talks to a real model (its key from the
 * environment); `--script FILE` to a scripted stand-in, offline. `--json` prints the transcript
 * as JSON lines. Lines come from stdin, typed or piped.
 *
 * I/O: stdin, stdout, stderr, the skill folders, and the provider's network when one is used.
 */
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { defineAgent } from '../../core/agent-definition.js';
import { createSignal } from '../../core/signal.js';
import { killRunningScripts } from '../../manifest/scripts.js';
import { createSkillTools } from '../../manifest/skill-tools.js';
import { documentMetadata } from '../../manifest/spec.js';
import { chatMessage, ChatSignals, conversation } from '../../model/conversation.js';
import type { ChatModel } from '../../model/models.js';
import { createAgentSystem } from '../../system.js';
import { catalogOf } from '../../core/agent-value.js';
import { scriptedModel, type ScriptStep } from '../../testing/scripted-model.js';
import { parseCommandArgs, UsageError, type Command } from '../io.js';
import { discoverFromFlags, SOURCE_HELP, SOURCE_OPTIONS } from '../sources.js';

/** The providers `--model` knows: the package to import, its default export, and the key it reads. */
export const PROVIDERS: Readonly<Record<string, { pkg: string; factory: string; env?: string }>> = {
  openai: { pkg: '@ai-sdk/openai', factory: 'openai', env: 'OPENAI_API_KEY' },
  anthropic: { pkg: '@ai-sdk/anthropic', factory: 'anthropic', env: 'ANTHROPIC_API_KEY' },
  google: { pkg: '@ai-sdk/google', factory: 'google', env: 'GOOGLE_GENERATIVE_AI_API_KEY' },
  mistral: { pkg: '@ai-sdk/mistral', factory: 'mistral', env: 'MISTRAL_API_KEY' },
  groq: { pkg: '@ai-sdk/groq', factory: 'groq', env: 'GROQ_API_KEY' },
  ollama: { pkg: 'ollama-ai-provider-v2', factory: 'ollama' },
};

/** A refusal to start: printed as it is, exit code 1. */
export class ChatRefusal extends Error {}

/** The model `--model provider:model` names, from the provider's package; refuses clearly when the package or the key is missing. */
export async function providerModel(spec: string, env: NodeJS.ProcessEnv = process.env, providers: typeof PROVIDERS = PROVIDERS): Promise<ChatModel> {
  const colon = spec.indexOf(':');
  if (colon <= 0 || colon === spec.length - 1) throw new UsageError(`--model takes provider:model, such as openai:gpt-4.1 (providers: ${Object.keys(PROVIDERS).join(', ')}), not '${spec}'`);
  const provider = spec.slice(0, colon);
  const id = spec.slice(colon + 1);
  const known = providers[provider];
  if (!known) throw new UsageError(`--model: unknown provider '${provider}'; known providers: ${Object.keys(providers).join(', ')}`);
  if (known.env !== undefined && !env[known.env]) {
    throw new ChatRefusal(`skillstate chat: --model ${spec} needs the ${known.env} environment variable (the provider's API key); set it, or use --script FILE to chat offline with a scripted model`);
  }
  let module: Record<string, unknown>;
  try {
    module = (await import(known.pkg)) as Record<string, unknown>;
  } catch {
    throw new ChatRefusal(`skillstate chat: --model ${spec} needs the provider package: npm install ${known.pkg}`);
  }
  const factory = module[known.factory];
  if (typeof factory !== 'function') throw new ChatRefusal(`skillstate chat: ${known.pkg} exports no '${known.factory}' function; is it an AI SDK provider?`);
  return factory(id) as ChatModel;
}

/** A scripted model from a JSON file: a list of responses. */
async function scriptFrom(file: string): Promise<ChatModel> {
  let script: unknown;
  try {
    script = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`--script: cannot read '${file}' as JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!Array.isArray(script)) throw new UsageError(`--script: '${file}' must hold a JSON list of responses, such as [{ "text": "Hello" }]`);
  return scriptedModel(script as ScriptStep[]);
}

/** The line printed when a model answer that was streamed failed part-way and is asked for again. */
const RETRY_NOTICE = "[the model's answer failed part-way; retrying]";
/** The line printed when the turn failed after part of the model's answer was printed: that text is no answer. */
const FAILED_NOTICE = "[the model's answer failed part-way]";

const dim = (text: string, color: boolean) => (color ? `\x1b[2m${text}\x1b[0m` : text);

function short(value: unknown, max = 160): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export const chatCommand: Command = {
  name: 'chat',
  help: `Usage: skillstate chat [options] [sources]

Opens a conversation with an agent made of the discovered document skills: the model sees the
skill catalog, loads skills with load_skill, gets their tools, reads their files and runs their
scripts (each run waits for your yes). The answer streams as it comes.

  --model <provider:model>  the model, such as openai:gpt-4.1 or anthropic:claude-sonnet-4-5
                            (providers: ${Object.keys(PROVIDERS).join(', ')}; the provider's package
                            must be installed and its key set, e.g. OPENAI_API_KEY)
  --script <file>           a scripted model instead: a JSON list of responses such as
                            [{"toolCalls":[{"tool":"load_skill","args":{"name":"x"}}]},{"text":"Done"}]
  --instructions <text>     what the agent is told before everything else
  --json                    print the transcript as JSON lines instead of text

In the conversation: /skills lists the skills (loaded ones marked), /reset forgets the
conversation, /exit (or end of input) leaves.

${SOURCE_HELP}`,
  async run(args, io) {
    const { values } = parseCommandArgs({
      args,
      options: { ...SOURCE_OPTIONS, model: { type: 'string' }, script: { type: 'string' }, instructions: { type: 'string' }, json: { type: 'boolean' } },
    });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    if ((values.model === undefined) === (values.script === undefined)) throw new UsageError('give --model provider:model, or --script FILE for a scripted model (one of them)');
    let model: ChatModel;
    try {
      model = values.script !== undefined ? await scriptFrom(values.script) : await providerModel(values.model!);
    } catch (error) {
      if (!(error instanceof ChatRefusal)) throw error;
      io.err(`${error.message}\n`);
      return 1;
    }
    const json = values.json === true;
    const color = !json && process.stdout.isTTY === true;
    const emit = (record: Record<string, unknown>) => io.out(`${JSON.stringify(record)}\n`);

    const registry = await discoverFromFlags(values, io);
    const definition = defineAgent({
      name: 'chat',
      skills: [[conversation, { instructions: values.instructions ?? 'You are a helpful assistant. Use the skills when they fit the request.' }], createSkillTools(registry, { scripts: { needsApproval: true } })],
      registry,
    });
    // Ctrl-C ends the chat as it always does, but not before the scripts a tool call runs (each in
    // a process group of its own, out of the terminal's reach) are killed.
    const interrupted = (signal: NodeJS.Signals) => {
      killRunningScripts();
      process.kill(process.pid, signal);
    };
    process.once('SIGINT', interrupted);
    process.once('SIGTERM', interrupted);
    const system = createAgentSystem({ models: { default: model }, resolvers: [registry], onUnhandledDiagnostic: () => {} });
    const agent = system.spawn(definition, { id: 'chat' });

    let streaming = false;
    const endLine = () => {
      if (streaming) io.out('\n');
      streaming = false;
    };
    /** The model step whose text was printed last, and its attempt. */
    let printed: { turn: number; step: number; attempt: number } | undefined;
    system.subscribe(ChatSignals.delta, (signal) => {
      if (json) return;
      const { turn, step, attempt, text } = signal.data as { turn: number; step: number; attempt: number; text: string };
      // A step tried again streams its answer anew: printed text cannot be taken back, so a line
      // says the earlier attempt's text is void, and the new answer starts on a line of its own.
      if (printed !== undefined && printed.turn === turn && printed.step === step && attempt > printed.attempt) {
        endLine();
        io.out(`${dim(RETRY_NOTICE, color)}\n`);
      }
      printed = { turn, step, attempt };
      if (!streaming) io.out(color ? '\x1b[1massistant:\x1b[0m ' : 'assistant: ');
      streaming = true;
      io.out(text);
    });
    system.subscribe(ChatSignals.toolCall, (signal) => {
      const { tool, args: input, toolCallId } = signal.data as { tool: string; args: unknown; toolCallId: string };
      if (json) return emit({ type: 'tool_call', id: toolCallId, tool, args: input });
      endLine();
      io.out(`${dim(`  → ${tool}(${short(input, 120)})`, color)}\n`);
    });
    system.subscribe(ChatSignals.toolResult, (signal) => {
      const { tool, ok, output, error, toolCallId } = signal.data as { tool: string; toolCallId: string; ok: boolean; output?: unknown; error?: { code: string; message: string } };
      if (json) return emit({ type: 'tool_result', id: toolCallId, tool, ok, ...(ok ? { output } : { error }) });
      io.out(`${dim(`  ← ${ok ? short(output) : `error ${error?.code}: ${error?.message}`}`, color)}\n`);
      if (ok && tool === 'load_skill') io.out(`${dim(`  (loaded: ${loaded().join(', ')})`, color)}\n`);
    });
    const loaded = () => {
      const catalog = catalogOf(agent.getSnapshot().agent);
      return agent.getSnapshot().mounted.map((m) => m.name).filter((name) => { const spec = catalog?.skills.get(name)?.spec; return spec !== undefined && documentMetadata(spec) !== undefined; });
    };

    const lines = createInterface({ input: process.stdin, terminal: false });
    const iterator = lines[Symbol.asyncIterator]();
    const ask = async (prompt: string): Promise<string | undefined> => {
      if (!json && process.stdin.isTTY) io.out(prompt);
      const next = await iterator.next();
      return next.done ? undefined : next.value;
    };
    // A tool call that needs approval: the next input line answers it.
    const approvals: Promise<void>[] = [];
    system.subscribe(ChatSignals.approval, (signal) => {
      const { toolCallId, tool, args: input } = signal.data as { toolCallId: string; tool: string; args: unknown };
      endLine();
      if (json) emit({ type: 'approval', id: toolCallId, tool, args: input });
      else io.out(`approve ${tool}(${short(input, 200)})? [y/N] `);
      approvals.push(
        (async () => {
          const answer = (await ask(''))?.trim().toLowerCase();
          const approved = answer === 'y' || answer === 'yes';
          if (json) emit({ type: 'decision', id: toolCallId, approved });
          else if (!process.stdin.isTTY) io.out(`${approved ? 'yes' : 'no'}\n`);
          agent.send(createSignal(approved ? 'chat.approve' : 'chat.deny', approved ? { toolCallId } : { toolCallId, reason: 'the user said no' }));
        })(),
      );
    });

    if (!json) io.err(`skillstate chat: ${registry.names().length} skill(s) found; /skills, /reset, /exit\n`);
    for (;;) {
      const line = await ask(color ? '\x1b[1myou:\x1b[0m ' : 'you: ');
      if (line === undefined) break;
      const text = line.trim();
      if (!text) continue;
      if (text === '/exit' || text === '/quit') break;
      if (text === '/reset') {
        await agent.call(createSignal('chat.reset'));
        if (json) emit({ type: 'reset' });
        else io.out('(conversation forgotten)\n');
        continue;
      }
      if (text === '/skills') {
        const on = new Set(loaded());
        const skills = registry.entries().map((entry) => ({ name: entry.name, description: entry.briefDescription, loaded: on.has(entry.name) }));
        if (json) emit({ type: 'skills', skills });
        else for (const skill of skills) io.out(`${skill.loaded ? '*' : ' '} ${skill.name}: ${skill.description}\n`);
        continue;
      }
      if (json) emit({ type: 'user', text });
      try {
        const answer = await agent.call(chatMessage(text), { timeout: Infinity });
        endLine();
        if (json) emit({ type: 'answer', text: answer });
      } catch (error) {
        // Printed text cannot be taken back: a line says the answer it began is not one.
        const partial = streaming;
        endLine();
        if (partial) io.out(`${dim(FAILED_NOTICE, color)}\n`);
        const { code, message } = error as { code?: string; message?: string };
        if (json) emit({ type: 'error', code: code ?? 'unknown', message: message ?? String(error) });
        else io.err(`error ${code ?? ''}: ${message ?? String(error)}\n`);
      }
      await Promise.all(approvals.splice(0));
    }
    lines.close();
    await system.shutdown();
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    return 0;
  },
};
