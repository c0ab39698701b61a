/**
 * Toolsets: `"toolsets/index:HelloToolset"` in a manifest names a module relative to the skill's
 * root and one of its exports. The module is imported — TypeScript included, through tsx's
 * `tsImport`, so no build step is needed — and the export's tools become the skill's actions.
 * tsx is an optional peer dependency, loaded only when a TypeScript toolset is imported; without
 * it such a toolset fails with a message saying how to install it. Accepted shapes, alone, in an array or in an object keyed by tool name:
 *
 * - skillstate actions made by `defineAction`;
 * - tool objects `{ name?, description, parameters: z.object(...), execute(args, ctx) }`;
 * - `Tool.define`-style objects `{ id, init() }` whose `init` returns such a tool;
 * - a class whose instances hold `tools` (or answer `getTools()`).
 *
 * Every failure is a `ManifestError` with code `toolset_failed` naming the skill, the file and
 * the export. I/O: imports modules from inside the skill's root only.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { defineAction, isAction, type AnyAction } from '../core/action.js';
import { describeThrown } from '../core/errors.js';
import { isPlainObject } from '../core/plain.js';
import { isObjectSchema } from '../core/schema.js';
import { confine } from './confine.js';
import { manifestError, type ManifestError } from './errors.js';
import type { ToolsetRef } from './fields.js';

export const TOOLSET_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs'] as const;

/** Imports every toolset of a skill and returns their actions, in manifest order. */
export async function loadToolsets(root: string, refs: readonly ToolsetRef[], skill: string): Promise<AnyAction[]> {
  const actions: AnyAction[] = [];
  for (const ref of refs) actions.push(...(await loadToolset(root, ref, skill)));
  const seen = new Set<string>();
  for (const action of actions) {
    if (seen.has(action.name)) throw toolsetError(skill, refs.map((ref) => ref.ref).join(', '), `two tools are named '${action.name}'`);
    seen.add(action.name);
  }
  return actions;
}

function toolsetError(skill: string, ref: string, message: string, cause?: unknown): ManifestError {
  return manifestError('toolset_failed', `skill '${skill}': toolset '${ref}': ${message}`, { skill, subject: ref }, cause);
}

/** Finds the module file: the path as given, or with one of the known extensions. */
async function resolveModule(root: string, ref: ToolsetRef, skill: string): Promise<string> {
  const candidates = TOOLSET_EXTENSIONS.some((ext) => ref.path.endsWith(ext)) ? [ref.path] : TOOLSET_EXTENSIONS.map((ext) => `${ref.path}${ext}`);
  for (const candidate of candidates) {
    const confined = await confine(root, candidate);
    if (confined.ok) {
      if ((await stat(confined.real)).isFile()) return confined.real;
      continue;
    }
    if (confined.reason !== 'missing') throw toolsetError(skill, ref.ref, confined.message);
  }
  throw toolsetError(skill, ref.ref, `no module ${candidates.map((c) => `'${c}'`).join(', ')} in ${root}`);
}

async function importModule(file: string): Promise<Record<string, unknown>> {
  // The file's modification time in the URL: a toolset edited on disk is imported anew (a
  // reloaded skill gets its new tools), an unchanged one comes from the module cache.
  const { mtimeMs, size } = await stat(file);
  const url = `${pathToFileURL(file).href}?v=${Math.trunc(mtimeMs)}-${size}`;
  if (file.endsWith('.js') || file.endsWith('.mjs')) return (await import(url)) as Record<string, unknown>;
  const { tsImport } = await loadTsx(file);
  return (await tsImport(url, { parentURL: import.meta.url })) as Record<string, unknown>;
}

/** Thrown when tsx is needed and not installed: the message says how to install it. */
export class TsxMissingError extends Error {}

/** The part of tsx's API skillstate uses (typed locally: the build's types must not need tsx). */
export interface TsxApi {
  tsImport(url: string, options: { parentURL: string }): Promise<unknown>;
  /** Registers tsx for the whole process, so `import()` loads TypeScript. */
  register(): unknown;
}

/** tsx's API, imported on first need; its absence is a `TsxMissingError` naming the file that needed it. */
export async function loadTsx(forFile: string, what: TypeScriptFileKind = 'toolset'): Promise<TsxApi> {
  try {
    return (await import('tsx/esm/api')) as TsxApi;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error;
    throw new TsxMissingError(tsxMissingMessage(forFile, what), { cause: error });
  }
}

/** What a TypeScript file that needs tsx is: a skill's toolset or script, or a module the command line loads. */
export type TypeScriptFileKind = 'toolset' | 'script' | 'module';

/** What to do when tsx is missing, for the TypeScript file that needed it. */
export function tsxMissingMessage(forFile: string, what: TypeScriptFileKind = 'toolset'): string {
  return `${path.basename(forFile)} is TypeScript, which needs tsx, an optional peer dependency of skillstate that is not installed: run 'npm install tsx' in your application (or ship the ${what} as .js)`;
}

/** Imports one toolset and adapts its export into actions. */
export async function loadToolset(root: string, ref: ToolsetRef, skill: string): Promise<AnyAction[]> {
  const file = await resolveModule(root, ref, skill);
  const shown = path.relative(root, file);
  let module: Record<string, unknown>;
  try {
    module = await importModule(file);
  } catch (error) {
    if (error instanceof TsxMissingError) {
      throw manifestError('toolset_failed', `skill '${skill}': toolset '${ref.ref}': ${error.message}`, { skill, subject: ref.ref, details: { reason: 'tsx_missing' } }, error);
    }
    throw toolsetError(skill, ref.ref, `importing ${file} failed: ${describeThrown(error)}`, error);
  }
  if (!(ref.exportName in module)) {
    const names = Object.keys(module).filter((key) => key !== 'default');
    throw toolsetError(skill, ref.ref, `${shown} has no export '${ref.exportName}' (its exports: ${names.join(', ') || 'none'})`);
  }
  const where = `${shown}:${ref.exportName}`;
  try {
    const actions = await adapt(module[ref.exportName], ref.exportName, where, 0);
    if (!actions.length) throw new Error('it holds no tools');
    return actions;
  } catch (error) {
    throw toolsetError(skill, ref.ref, `export '${ref.exportName}' of ${shown}: ${describeThrown(error)}`, error);
  }
}

interface ToolLike {
  name?: unknown;
  id?: unknown;
  description?: unknown;
  parameters?: unknown;
  inputSchema?: unknown;
  execute?: unknown;
  init?: unknown;
}

function isClass(value: unknown): value is new () => unknown {
  return typeof value === 'function' && /^class[\s{]/.test(Function.prototype.toString.call(value));
}

/** Adapts an export (or part of one) into actions. */
async function adapt(value: unknown, key: string, where: string, depth: number): Promise<AnyAction[]> {
  if (depth > 4) throw new Error(`tools are nested too deeply at '${key}'`);
  if (isAction(value)) return [value];
  if (Array.isArray(value)) return (await Promise.all(value.map((item, i) => adapt(item, `${key}[${i}]`, where, depth + 1)))).flat();
  if (isClass(value)) {
    const instance = new value() as { tools?: unknown; getTools?: unknown };
    const tools = typeof instance.getTools === 'function' ? await (instance.getTools as () => unknown)() : instance.tools;
    if (tools === undefined) return adapt(instance, key, where, depth + 1);
    return adapt(tools, key, where, depth + 1);
  }
  if (typeof value !== 'object' || value === null) throw new Error(`'${key}' is ${value === null ? 'null' : typeof value}, not a tool`);
  const tool = value as ToolLike;
  if (typeof tool.execute === 'function') return [toolAction(tool, key)];
  if (typeof tool.init === 'function' && typeof tool.id === 'string') {
    const initialised = (await (tool.init as () => unknown)()) as ToolLike;
    return [toolAction({ ...initialised, name: tool.id }, key)];
  }
  if (isPlainObject(value)) {
    const entries = Object.entries(value);
    if (!entries.length) throw new Error(`'${key}' is an empty object`);
    return (await Promise.all(entries.map(([name, item]) => adapt(item, name, where, depth + 1)))).flat();
  }
  throw new Error(`'${key}' is neither an action nor a tool with execute()`);
}

/** Turns a tool object into an action whose `run` calls `execute(args, ctx)`. */
function toolAction(tool: ToolLike, key: string): AnyAction {
  const name = typeof tool.name === 'string' ? tool.name : typeof tool.id === 'string' ? tool.id : key;
  const input = tool.parameters ?? tool.inputSchema;
  if (!isObjectSchema(input)) throw new Error(`tool '${name}' needs parameters that are a zod object schema (z.object({...}))`);
  if (typeof tool.description !== 'string' || !tool.description.trim()) throw new Error(`tool '${name}' needs a description`);
  const execute = tool.execute as (args: unknown, ctx: unknown) => unknown;
  return defineAction({
    name,
    description: tool.description,
    input,
    run: (params, ctx) => execute.call(tool, params, ctx),
  });
}
