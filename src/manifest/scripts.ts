/**
 * Scripts (with their limits enforced here): a skill's script runs as a subprocess,
 * never through a shell. The working directory is the skill's root; the interpreter is chosen by
 * extension (`.sh` bash, `.py` python3, `.js`/`.mjs`/`.cjs` node, `.ts`/`.mts` node with tsx) or
 * by the file's own `#!` line; the script must be a regular file inside the root (real path, so
 * links cannot lead out); at most 100 arguments and 4,096 argument bytes; the environment is
 * scrubbed to a short allow-list; the run is killed — its whole process group — after the
 * timeout (default 60 s), once its output passes 1 MiB, or when its `signal` aborts, and the
 * result says so.
 *
 * Refusals throw a `ManifestError` with code `script_refused`; a script that cannot be started
 * throws `script_failed`; a limit that is not a usable number (a timeout past what a timer can
 * hold, `Infinity`, zero, `NaN`) throws `invalid_options` naming the option, before anything
 * runs. A script that runs and fails is not an error: see `exitCode`.
 *
 * I/O: spawns processes, reads the script's first line.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { confine } from './confine.js';
import { fileKind, NotRegularFileError, openRegularFile } from './regular.js';
import { ManifestError, manifestError } from './errors.js';
import { optionsProblem } from '../core/options.js';
import type { ScriptRefusal } from '../core/error-info.js';
import type { ScriptRef } from './fields.js';
import { TsxMissingError, tsxMissingMessage } from './toolsets.js';

export const DEFAULT_SCRIPT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
/**
 * The longest timeout: 2^31 − 1 ms (about 24.8 days), the most a Node.js timer holds. A longer
 * one would fire after 1 ms, so it is refused rather than passed on.
 */
export const MAX_SCRIPT_TIMEOUT_MS = 2 ** 31 - 1;
export const MAX_SCRIPT_ARGS = 100;
export const MAX_SCRIPT_ARG_BYTES = 4096;
/** The only variables a script inherits (others may be added with `env`). */
export const ENV_ALLOW_LIST = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TMPDIR', 'TEMP', 'TMP', 'TZ', 'TERM', 'USER', 'LOGNAME', 'SYSTEMROOT'] as const;

/** The skill a script belongs to: a registry entry, a document skill, or a root path. */
export type ScriptOwner =
  | string
  | {
      name: string;
      rootPath?: string | undefined;
      manifest?: { scripts: readonly ScriptRef[] } | undefined;
      /** False for an untrusted skill (a registry entry of a project skill not yet trusted): its scripts are refused. */
      trusted?: boolean;
      source?: string;
    };

/** Options of `runSkillScript`: arguments, timeout, output limit, environment. */
export interface ScriptOptions {
  /** Milliseconds before the process group is killed (default 60,000; at most `MAX_SCRIPT_TIMEOUT_MS`, about 24.8 days). */
  timeoutMs?: number;
  /** Bytes of stdout and stderr together before the process group is killed (default 1 MiB; a positive finite number). */
  maxOutputBytes?: number;
  /** Variables to set on top of the scrubbed environment. */
  env?: Readonly<Record<string, string>>;
  /** Text written to the script's standard input (default: none, stdin closed). */
  input?: string;
  /**
   * Aborting it kills the script's process group at once, as a time-out does: the result's
   * `signal` is `'SIGKILL'` and `cancelled` is true. (An action passes its `ctx.abortSignal`.)
   */
  signal?: AbortSignal;
}

/** The options `runSkillScript` takes: one entry per key of `ScriptOptions`. */
const SCRIPT_OPTIONS = { timeoutMs: true, maxOutputBytes: true, env: true, input: true, signal: true } as const satisfies Record<keyof ScriptOptions, true>;

/** What running a skill script produced: exit code, output, and whether it timed out. */
export interface ScriptResult {
  /** The command run: the interpreter, its arguments, the script and its arguments. */
  command: string[];
  exitCode: number | null;
  /** The signal that ended the process ('SIGKILL' after a timeout or an output flood), or null. */
  signal: string | null;
  stdout: string;
  stderr: string;
  /** The output passed the cap: the rest was dropped and the process killed. */
  truncated: boolean;
  timedOut: boolean;
  /** `options.signal` aborted while the script ran (or before it began): its process group was killed. */
  cancelled: boolean;
  /** The script exited leaving processes running in its process group; they were killed. */
  strayProcessesKilled: boolean;
  durationMs: number;
}

/** The limits of a script run that must be numbers in range. */
export type ScriptLimit = 'timeoutMs' | 'maxOutputBytes';

/**
 * What is wrong with a value for a script limit, as the end of a sentence naming the option
 * ("must be ..."), or undefined when it is usable: a timeout is a positive finite number of
 * milliseconds up to `MAX_SCRIPT_TIMEOUT_MS`; an output limit a positive finite number of bytes.
 */
export function scriptLimitProblem(limit: ScriptLimit, value: unknown): string | undefined {
  if (limit === 'timeoutMs') {
    const usable = typeof value === 'number' && value > 0 && value <= MAX_SCRIPT_TIMEOUT_MS;
    return usable ? undefined : `must be a positive number of milliseconds, at most ${MAX_SCRIPT_TIMEOUT_MS} (about 24.8 days)`;
  }
  const usable = typeof value === 'number' && value > 0 && Number.isFinite(value);
  return usable ? undefined : 'must be a positive, finite number of bytes';
}

/**
 * Checks the limits given to a script run (or to the tool that runs scripts); throws
 * `invalid_options` naming the first unusable one as `<where>.<option>` (or `<option>`).
 */
export function assertScriptLimits(limits: Partial<Record<ScriptLimit, unknown>>, where?: string): void {
  for (const limit of ['timeoutMs', 'maxOutputBytes'] as const) {
    const value = limits[limit];
    if (value === undefined) continue;
    const problem = scriptLimitProblem(limit, value);
    if (!problem) continue;
    const option = where ? `${where}.${limit}` : limit;
    throw manifestError('invalid_options', `${option} ${problem}, not ${typeof value === 'number' ? value : JSON.stringify(value)}`, { subject: option, details: { option, value } });
  }
}

function refused(skill: string, script: string, message: string, reason: ScriptRefusal): ManifestError {
  return manifestError('script_refused', `skill '${skill}': script '${script}' refused: ${message}`, { skill, subject: script, details: { reason } });
}

/** The interpreter command for a script, from its extension or its `#!` line. */
async function interpreterFor(file: string): Promise<string[] | undefined> {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.sh' || ext === '.bash') return ['bash'];
  if (ext === '.py') return ['python3'];
  if (ext === '.js' || ext === '.mjs' || ext === '.cjs') return [process.execPath];
  if (ext === '.ts' || ext === '.mts') return [process.execPath, tsxCli(file)];
  const { handle } = await openRegularFile(file);
  try {
    const buffer = Buffer.alloc(256);
    const { bytesRead } = await handle.read(buffer, 0, 256, 0);
    const line = buffer.subarray(0, bytesRead).toString('utf8').split('\n')[0]!;
    if (!line.startsWith('#!')) return undefined;
    const parts = line.slice(2).trim().split(/\s+/).filter(Boolean);
    return parts.length ? parts : undefined;
  } finally {
    await handle.close();
  }
}

/** tsx's command-line entry, which runs TypeScript scripts; tsx is an optional peer dependency. */
function tsxCli(file: string): string {
  try {
    return createRequire(import.meta.url).resolve('tsx/cli');
  } catch {
    throw new TsxMissingError(tsxMissingMessage(file, 'script'));
  }
}

/** Checks the argument limits; returns the problem, if any. */
function argumentProblem(args: readonly unknown[]): string | undefined {
  if (!Array.isArray(args)) return 'arguments must be an array of strings';
  if (args.length > MAX_SCRIPT_ARGS) return `${args.length} arguments, more than the ${MAX_SCRIPT_ARGS} allowed`;
  let bytes = 0;
  for (const arg of args) {
    if (typeof arg !== 'string') return 'every argument must be a string';
    if (arg.includes('\0')) return 'an argument contains a NUL character';
    bytes += Buffer.byteLength(arg, 'utf8');
  }
  if (bytes > MAX_SCRIPT_ARG_BYTES) return `arguments total ${bytes} bytes, more than the ${MAX_SCRIPT_ARG_BYTES} allowed`;
  return undefined;
}

/** The scrubbed environment: the allow-list from this process, then `extra`. */
export function scriptEnvironment(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ENV_ALLOW_LIST) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return { ...env, ...extra };
}

/**
 * Runs a script of a skill: `script` is a name the manifest declares under `scripts`, a path
 * relative to the skill's root, or an absolute path inside it. Only a regular file is run.
 * Resolves with the result once the process has ended (or been killed); throws `script_refused`
 * or `script_failed`, and `invalid_options` for a limit out of range or an option `ScriptOptions`
 * does not have.
 */
export async function runSkillScript(owner: ScriptOwner, script: string, args: readonly string[] = [], options: ScriptOptions = {}): Promise<ScriptResult> {
  // A misspelled `timeoutMS` would run the script under the default limit, without a word.
  const unknown = optionsProblem('runSkillScript', options, SCRIPT_OPTIONS, '{ timeoutMs: 5000 }');
  if (unknown) throw new ManifestError(unknown);
  assertScriptLimits(options);
  if (typeof owner !== 'string' && (typeof owner !== 'object' || owner === null)) throw refused('?', script, 'no skill was given', 'no_root');
  const skill = typeof owner === 'string' ? path.basename(owner) : owner.name;
  const root = typeof owner === 'string' ? owner : owner.rootPath;
  if (!root) throw refused(skill, script, 'the skill has no folder, so it has no scripts', 'no_root');
  if (typeof owner !== 'string' && owner.trusted === false) {
    throw refused(skill, script, `the skill comes from the ${owner.source ?? 'project'} folder and is not trusted; trust it first (skillstate trust ${skill})`, 'untrusted');
  }
  const declared = typeof owner === 'string' ? undefined : owner.manifest?.scripts.find((ref) => ref.name === script);
  const relative = declared?.path ?? script;
  const problem = argumentProblem(args);
  if (problem) throw refused(skill, script, problem, 'arguments');
  const confined = await confine(root, relative, { allowAbsolute: true });
  if (!confined.ok) throw refused(skill, script, confined.message, confined.reason);
  const info = await stat(confined.real);
  if (!info.isFile()) throw refused(skill, script, `'${confined.relative}' is a ${fileKind(info)}, not a regular file`, 'not_a_file');
  let interpreter: string[] | undefined;
  try {
    interpreter = await interpreterFor(confined.real);
  } catch (error) {
    if (error instanceof TsxMissingError) throw manifestError('script_failed', `skill '${skill}': script '${script}' cannot run: ${error.message}`, { skill, subject: script, details: { reason: 'tsx_missing' } });
    if (!(error instanceof NotRegularFileError)) throw error;
    throw refused(skill, script, `'${confined.relative}' is a ${error.kind}, not a regular file`, 'not_a_file');
  }
  if (!interpreter) throw refused(skill, script, `no interpreter for '${confined.relative}': use .sh, .py, .js, .mjs or .ts, or start it with a #! line`, 'no_interpreter');

  const timeoutMs = options.timeoutMs ?? DEFAULT_SCRIPT_TIMEOUT_MS;
  const maxOutput = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const command = [...interpreter, confined.real, ...args];
  const started = performance.now();
  const child = spawn(command[0]!, command.slice(1), {
    cwd: root,
    env: scriptEnvironment(options.env),
    detached: true,
    shell: false,
    windowsHide: true,
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  return new Promise<ScriptResult>((resolve, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let total = 0;
    let truncated = false;
    let timedOut = false;
    let cancelled = false;
    let settled = false;
    /**
     * The script has exited: what comes after (an abort, the time-out) did not end it, and its
     * process id may name another process by now, so nothing is killed by it any more.
     */
    let exited = false;
    const killGroup = () => {
      if (exited) return;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
      if (child.pid !== undefined) killSession(child.pid);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    running.add(killGroup);
    const cancel = () => {
      if (exited) return;
      cancelled = true;
      killGroup();
    };
    options.signal?.addEventListener('abort', cancel, { once: true });
    if (options.signal?.aborted) cancel();
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      if (truncated) return;
      const room = maxOutput - total;
      if (chunk.length > room) {
        into.push(chunk.subarray(0, room));
        total = maxOutput;
        truncated = true;
        killGroup();
        return;
      }
      into.push(chunk);
      total += chunk.length;
    };
    child.stdout!.on('data', collect(out));
    child.stderr!.on('data', collect(err));
    if (options.input !== undefined) {
      // A script may exit without reading all its input; the pipe then breaks (EPIPE), and the
      // unread rest is simply not read — the run's result is what the script did.
      child.stdin!.on('error', () => {});
      child.stdin!.end(options.input);
    }
    const finish = (exitCode: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      running.delete(killGroup);
      options.signal?.removeEventListener('abort', cancel);
      resolve({
        command,
        exitCode,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        truncated,
        timedOut,
        cancelled,
        strayProcessesKilled: strays,
        durationMs: performance.now() - started,
      });
    };
    child.on('error', (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      running.delete(killGroup);
      options.signal?.removeEventListener('abort', cancel);
      reject(manifestError('script_failed', `skill '${skill}': script '${script}' could not be started with '${command[0]}': ${error.message}`, { skill, subject: script }, error));
    });
    // The limits hold for everything the script started: what it leaves running in its process
    // group when it exits is killed (and reported), so nothing outlives the run.
    let strays = false;
    child.on('close', (code, signal) => finish(code, signal));
    child.on('exit', (code, signal) => {
      exited = true;
      clearTimeout(timer);
      running.delete(killGroup);
      options.signal?.removeEventListener('abort', cancel);
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 0);
          strays = true;
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // The group is empty: nothing was left behind.
        }
        // Jobs moved to groups of their own (`set -m`) are still in the script's session.
        if (killSession(child.pid)) strays = true;
      }
      // 'close' waits for the pipes; should anything still hold them open, give up after a second.
      setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish(code, signal);
      }, 1000).unref();
    });
  });
}

/** How to kill each script running now: its process group and session. */
const running = new Set<() => void>();

/**
 * Kills every skill script this process runs now, with what each started. A script runs in a
 * process group of its own, which a Ctrl-C at the terminal does not reach: a program that dies
 * of one calls this first, or leaves its scripts running.
 */
export function killRunningScripts(): void {
  for (const kill of running) kill();
}

/**
 * Kills every process left in session `session` (a script runs as the leader of a session of its
 * own), wherever in it they moved their process group; true when there was one. On Linux, where
 * `/proc` lists each process's session; elsewhere the process group is all there is to go by.
 */
function killSession(session: number): boolean {
  if (process.platform !== 'linux') return false;
  let killed = false;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return false;
  }
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === session) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // `pid (comm) state ppid pgrp session ...`: the name may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[3]) !== session) continue;
    try {
      process.kill(pid, 'SIGKILL');
      killed = true;
    } catch {
      // ended meanwhile
    }
  }
  return killed;
}
