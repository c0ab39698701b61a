/**
 * The skill tools a language model uses to reach document skills, as a code skill named
 * `skills` whose actions — and therefore whose LLM tools, through `toolsForAgent` — are:
 *
 * - `load_skill`: activates a skill by mounting it on the agent (`result(..., { replace: [spec] })`:
 *   `cmd` applies the mount and emits one `register_action` per toolset action), and returns its
 *   body without front matter, wrapped in `<skill_content>` (an untrusted skill's body starting
 *   with the notice saying why its tools are missing), its root path and its resources.
 *   Loading a mounted skill again mounts nothing and returns the body again; when the skill has
 *   changed on disk since (the registry reloaded it), the new version takes the old one's place.
 *   An unknown name fails with the list of available skills; a skill whose folder was deleted
 *   since it was discovered fails with `skill_not_found`, saying what is missing and what to do.
 * - `list_skills`: the enabled skills with their descriptions (or `brief_description` where given).
 * - `read_skill_resource`: one file of a skill, by a path relative to its root or an absolute
 *   path inside it (see `resources.ts` for what is refused).
 * - `run_skill_script` (when asked for): a script of a loaded skill, under the script limits;
 *   the result names the signal that ended it and says when processes it left were killed. The
 *   script is killed when the call is no longer wanted (`ctx.abortSignal`), and the result says
 *   it was cancelled, and why.
 *
 * I/O: through the registry only.
 */
import path from 'node:path';
import { z } from 'zod';
import { defineAction, fail, result } from '../core/action.js';
import type { AnyAction } from '../core/action.js';
import { defineSkill, type AnySkill } from '../core/skill.js';
import { optionsProblem, unknownOption } from '../core/options.js';
import { ManifestError } from './errors.js';
import { wrapBody } from './escape.js';
import { rankSkills } from './disclose.js';
import type { DocumentSkillRegistry } from './document-registry.js';
import type { RootPathMode } from './render.js';
import { readSkillResource } from './resources.js';
import { skippedFolderNamed } from './skipped-folder.js';
import { assertScriptLimits, runSkillScript } from './scripts.js';
import { bodyForModel, untrustedNotice } from './trust.js';

/** Options of `createSkillTools`. */
export interface SkillToolsOptions {
  /** The code skill's name (default `skills`). */
  name?: string;
  /** Largest resource returned as text, in bytes (default 256 KiB); longer ones are cut and marked. */
  maxResourceBytes?: number;
  /** Restrict `load_skill`'s parameter to an enum of the names registered now (default: a validated string). */
  nameEnum?: boolean;
  /**
   * How `load_skill` reports the skill's folder in `rootPath`: `'absolute'` (default), `'relative'`
   * (to `workspace`) or `'hidden'` (left out). Use the same choice as the disclosure's `rootPath`.
   */
  rootPath?: RootPathMode;
  /** The folder `'relative'` root paths start from (default: the process's working directory). */
  workspace?: string;
  /**
   * Offer `run_skill_script`, which runs a script of a loaded skill (no shell, a scrubbed
   * environment, limits on time and output; untrusted project skills are refused). Off by
   * default. `needsApproval` makes each run wait for a person's approval in a conversation.
   */
  scripts?: boolean | { timeoutMs?: number; maxOutputBytes?: number; needsApproval?: boolean };
}

/** The options `createSkillTools` takes: one entry per key of `SkillToolsOptions`. */
const SKILL_TOOLS_OPTIONS = { name: true, maxResourceBytes: true, nameEnum: true, rootPath: true, workspace: true, scripts: true } as const satisfies Record<keyof SkillToolsOptions, true>;
/** The options `scripts: { … }` takes. */
const SCRIPTS_OPTIONS = { timeoutMs: true, maxOutputBytes: true, needsApproval: true } as const satisfies Record<keyof Exclude<SkillToolsOptions['scripts'], boolean | undefined>, true>;

/** A skill's folder as `load_skill` reports it under the chosen mode. */
function reportedRoot(rootPath: string | undefined, options: SkillToolsOptions): string | undefined {
  if (rootPath === undefined || options.rootPath === 'hidden') return undefined;
  if (options.rootPath !== 'relative') return rootPath;
  return path.relative(options.workspace ?? process.cwd(), rootPath).split(path.sep).join('/') || '.';
}

/** What `load_skill` returns. */
export interface LoadSkillOutput {
  skill: string;
  version: string | undefined;
  /** The skill's folder, as `SkillToolsOptions.rootPath` chooses to show it. */
  rootPath: string | undefined;
  /** The body, without front matter, inside `<skill_content name="...">`; an untrusted skill's starts with `notice`. */
  instructions: string;
  resources: string[];
  /** Actions the skill brought (now registered on the agent). */
  tools: string[];
  /** The skill was already mounted: nothing was mounted again. */
  alreadyLoaded: boolean;
  /** False for a project skill not yet trusted: it brought no tools and its scripts will not run. */
  trusted: boolean;
  /** Why the skill's tools are missing, for the model, when it is not trusted (also the first line of `instructions`). */
  notice?: string;
}

function failure(error: unknown) {
  if (error instanceof ManifestError) return fail(error.code, error.message, error.details);
  throw error;
}

/**
 * Creates the `skills` code skill over a registry: mount it on an agent to offer the tools.
 * Throws `invalid_options` for an option `SkillToolsOptions` does not have (in `scripts` too).
 */
export function createSkillTools(registry: DocumentSkillRegistry, options: SkillToolsOptions = {}): AnySkill {
  // A misspelled `scripst` would leave the model without run_skill_script, without a word.
  const unknown =
    optionsProblem('createSkillTools', options, SKILL_TOOLS_OPTIONS, '{ scripts: true }') ??
    (typeof options.scripts === 'object' && options.scripts !== null ? unknownOption('createSkillTools scripts', options.scripts, SCRIPTS_OPTIONS) : undefined);
  if (unknown) throw new ManifestError(unknown);
  if (typeof options.scripts === 'object' && options.scripts !== null) assertScriptLimits(options.scripts, 'scripts');
  const names = registry.names();
  const nameSchema =
    options.nameEnum && names.length ? z.enum(names as [string, ...string[]]) : z.string().min(1).max(64);
  const known = () => registry.entries().map((entry) => entry.name);

  const loadSkill = defineAction({
    name: 'load_skill',
    description: 'Load a skill by name: returns its instructions, its root path and its files, and makes its tools available.',
    input: z.object({ name: nameSchema.describe('The skill to load, as listed in the skill catalog or by list_skills') }),
    run: async ({ name }, ctx) => {
      if (!registry.has(name)) {
        const skipped = skippedFolderNamed(registry.diagnostics, name);
        return fail('unknown_skill', `no skill named '${name}'${skipped ? ` (${skipped})` : ''}; available skills: ${known().join(', ') || '(none)'}`, { available: known() });
      }
      try {
        const { spec, entry, loaded } = await registry.activate(name);
        const output: LoadSkillOutput = {
          // The identifier it is registered under, whichever name found it.
          skill: entry.name,
          version: entry.version,
          rootPath: reportedRoot(entry.rootPath, options),
          instructions: wrapBody(entry.name, bodyForModel(entry, loaded.instructions)),
          resources: [...loaded.resources.keys()],
          tools: spec.actions.map((action) => action.name),
          alreadyLoaded: Object.hasOwn(ctx.state, spec.stateKey),
          trusted: entry.trusted,
        };
        if (!entry.trusted) output.notice = untrustedNotice(entry);
        // `replace`: mounts the skill, or puts a reloaded version in place of the mounted one.
        return result(output, { replace: [spec] });
      } catch (error) {
        return failure(error);
      }
    },
  });

  // With a `query`, the skills relevant to it, most relevant first, with their scores. Skills
  // marked `disable-model-invocation` are never listed: they are loaded only by name.
  const listSkills = defineAction({
    name: 'list_skills',
    description:
      'List the skills that can be loaded, each with its description: what it does and when to use it. Give a query (what the user wants) to get only the relevant skills, most relevant first.',
    input: z.object({
      query: z.string().max(4096).optional().describe('What the user wants, in their words: returns the relevant skills, best first'),
    }),
    run: ({ query }) => {
      const entries = registry.entries().filter((entry) => entry.modelInvocable);
      const describe = (entry: (typeof entries)[number]) => ({ name: entry.name, description: entry.briefDescription, version: entry.version, source: entry.source, ...(entry.trusted ? {} : { trusted: false }), ...(entry.origin ? { origin: entry.origin } : {}) });
      if (query === undefined || !query.trim()) {
        const skills = entries.map(describe);
        return { count: skills.length, skills };
      }
      const byName = new Map(entries.map((entry) => [entry.name, entry]));
      const skills = rankSkills(registry, query)
        .filter((item) => byName.has(item.name))
        .map((item) => ({ ...describe(byName.get(item.name)!), score: Math.round(item.score * 100) / 100 }));
      return { count: skills.length, total: entries.length, query, skills };
    },
  });

  const readResource = defineAction({
    name: 'read_skill_resource',
    description: "Read one file of a skill by its path relative to the skill's root (e.g. reference.md or scripts/run.py), or by an absolute path inside the root.",
    input: z.object({
      skill: z.string().min(1).max(64).describe('The skill the file belongs to'),
      path: z.string().min(1).max(1024).describe("The file's path relative to the skill's root, or an absolute path inside it"),
    }),
    run: async ({ skill, path }) => {
      if (!registry.has(skill)) {
        return fail('unknown_skill', `no skill named '${skill}'; available skills: ${known().join(', ') || '(none)'}`, { available: known() });
      }
      try {
        const loaded = await registry.content(skill);
        const content = await readSkillResource(skill, loaded, path, { maxBytes: options.maxResourceBytes });
        return {
          skill,
          path: content.path,
          size: content.size,
          binary: content.binary,
          truncated: content.truncated,
          content: content.binary ? `[binary file of ${content.size ?? 'unknown'} bytes: not shown]` : content.text,
        };
      } catch (error) {
        return failure(error);
      }
    },
  });

  const actions: AnyAction[] = [loadSkill, listSkills, readResource] as AnyAction[];
  if (options.scripts) actions.push(runScriptAction(registry, options.scripts === true ? {} : options.scripts));
  const skill = defineSkill({
    name: options.name ?? 'skills',
    description: 'Find, load and read document skills (SKILL.md folders).',
    category: 'skills',
    tags: ['skills', 'document'],
    actions,
    instructions: 'Call list_skills to see the skills, load_skill to activate one, read_skill_resource to read its files.',
  });
  toolRegistries.set(skill, registry);
  return skill;
}

/** The `run_skill_script` action: runs a script of a skill the agent has loaded. */
function runScriptAction(registry: DocumentSkillRegistry, limits: { timeoutMs?: number; maxOutputBytes?: number; needsApproval?: boolean }): AnyAction {
  return defineAction({
    name: 'run_skill_script',
    description:
      "Run a script of a loaded skill, by the name its SKILL.md gives it or its path relative to the skill's root, with arguments. Returns the exit code and the output.",
    input: z.object({
      skill: z.string().min(1).max(64).describe('The loaded skill the script belongs to'),
      script: z.string().min(1).max(1024).describe("The script's name in SKILL.md, or its path relative to the skill's root"),
      args: z.array(z.string().max(4096)).max(100).default([]).describe('Arguments, one string each (no shell: no quoting needed)'),
    }),
    needsApproval: limits.needsApproval ?? false,
    run: async ({ skill, script, args }, ctx) => {
      const entry = registry.entry(skill);
      const spec = registry.get(skill);
      if (!entry) return fail('unknown_skill', `no skill named '${skill}'; available skills: ${registry.names().join(', ') || '(none)'}`);
      if (!spec || !Object.hasOwn(ctx.state, spec.stateKey)) return fail('skill_not_loaded', `skill '${skill}' is not loaded; load it with load_skill first`, { skill });
      try {
        // Its signal aborts when the call is no longer wanted (the agent stops, the caller gives
        // up, the model's turn is cancelled): the script and what it started are killed then.
        const ran = await runSkillScript(entry, script, args, {
          ...(limits.timeoutMs !== undefined ? { timeoutMs: limits.timeoutMs } : {}),
          ...(limits.maxOutputBytes !== undefined ? { maxOutputBytes: limits.maxOutputBytes } : {}),
          signal: ctx.abortSignal,
        });
        return {
          skill,
          script,
          exitCode: ran.exitCode,
          // How the script ended and what was cleaned up after it, only when there is something to say.
          ...(ran.signal ? { signal: ran.signal } : {}),
          stdout: ran.stdout,
          stderr: ran.stderr,
          timedOut: ran.timedOut,
          truncated: ran.truncated,
          ...(ran.cancelled ? { cancelled: true, cancelReason: abortReason(ctx.abortSignal) } : {}),
          ...(ran.strayProcessesKilled ? { strayProcessesKilled: true } : {}),
          durationMs: Math.round(ran.durationMs),
        };
      } catch (error) {
        return failure(error);
      }
    },
  });
}

/** Why a call's abort signal aborted, in words, for the model: the message of the error it carries. */
function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : 'the call was cancelled';
}

const toolRegistries = new WeakMap<AnySkill, DocumentSkillRegistry>();

/** The registry a skill made by `createSkillTools` loads from (undefined for any other skill). */
export function skillToolsRegistry(skill: AnySkill): DocumentSkillRegistry | undefined {
  return toolRegistries.get(skill);
}
