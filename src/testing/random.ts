/**
 * Random model tests: fast-check's model-based testing (`fc.commands`) draws interleavings of
 * signals, mounts, unmounts, faults, restarts and persist/restore, runs each on a real agent
 * through the driver, and shrinks a failure to a minimal sequence, printed as a
 * `model.replay([...])` call to paste into a test.
 */
import fc from 'fast-check';
import { describeStep, ModelViolation, startSession, takeStep, type ModelSession, type ModelSetup, type ModelStep } from './driver.js';

/** How `model.check()` explores. */
export interface ModelCheckOptions {
  /** Random sequences to run. Default 50. */
  runs?: number;
  /** Longest sequence. Default 20 steps. */
  maxSteps?: number;
  /** Seed, to run the same sequences again (a failure reports the one it used). Default: random. */
  seed?: number;
  /** Include `{ restart: true }` steps (restore in a new system). Default true. */
  restarts?: boolean;
  /** Include `{ persist: true }` steps (restore in the same system). Default true. */
  persistence?: boolean;
}

/** A random model test found a violation; `steps` is the shrunk sequence, `code` the call to paste into a test. */
export class ModelCheckFailure extends Error {
  constructor(
    /** What went wrong, at which step of the shrunk sequence. */
    readonly violation: string,
    /** The shrunk sequence. */
    readonly steps: readonly ModelStep[],
    /** `await model.replay([...]);`, ready to paste into a test. */
    readonly code: string,
    /** The seed that found it (`model.check({ seed })` finds it again). */
    readonly seed: number,
  ) {
    super(`model check failed (seed ${seed}): ${violation}\n\nShrunk to ${steps.length} step${steps.length === 1 ? '' : 's'}; paste into a test:\n\n  ${code}\n`);
    this.name = 'ModelCheckFailure';
  }
}

function quote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** A sequence as the `model.replay` call that runs it. */
export function replayCode(steps: readonly ModelStep[]): string {
  const items = steps.map((step) => {
    const [kind, value] = Object.entries(step)[0]!;
    return `{ ${kind}: ${value === true ? 'true' : quote(String(value))} }`;
  });
  return `await model.replay([${items.join(', ')}]);`;
}

/** What fast-check's model sees: the mounted optional skills (the session's own set). */
interface Mounted {
  mounted: ReadonlySet<string>;
}

class StepCommand<M> implements fc.AsyncCommand<Mounted, ModelSession<M>> {
  constructor(
    readonly step: ModelStep,
    private readonly setup: ModelSetup<M>,
  ) {}

  check({ mounted }: Readonly<Mounted>): boolean {
    const present = (name: string) => mounted.has(name) || this.setup.staticNames.has(name);
    if ('mount' in this.step) {
      const skill = this.setup.optional.get(this.step.mount)!;
      return !mounted.has(skill.name) && skill.requires.every(present);
    }
    if ('unmount' in this.step) {
      const name = this.step.unmount;
      return mounted.has(name) && ![...mounted].some((other) => this.setup.optional.get(other)?.requires.includes(name));
    }
    return true;
  }

  async run(_model: Mounted, session: ModelSession<M>): Promise<void> {
    await takeStep(session, this.setup, this.step);
  }

  toString(): string {
    return describeStep(this.step);
  }
}

/** The steps a random sequence is drawn from. */
function candidateSteps<M>(setup: ModelSetup<M>, options: ModelCheckOptions): ModelStep[] {
  const steps: ModelStep[] = [];
  for (const name of setup.optional.keys()) steps.push({ mount: name }, { unmount: name });
  for (const name of Object.keys(setup.signals)) steps.push({ signal: name });
  for (const name of Object.keys(setup.faults)) steps.push({ fault: name });
  if (options.restarts ?? true) steps.push({ restart: true });
  if (options.persistence ?? true) steps.push({ persist: true });
  return steps;
}

/** Runs random sequences; throws a `ModelCheckFailure` with the shrunk sequence on the first violation. */
export async function checkRandomly<M>(setup: ModelSetup<M>, options: ModelCheckOptions = {}): Promise<void> {
  const arbitraries = candidateSteps(setup, options).map((step) => fc.constant(new StepCommand(step, setup)));
  if (!arbitraries.length) return;
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const property = fc.asyncProperty(fc.commands(arbitraries, { maxCommands: options.maxSteps ?? 20 }), async (commands) => {
    const session = await startSession(setup);
    try {
      await fc.asyncModelRun(() => ({ model: { mounted: session.mounted }, real: session }), commands);
    } finally {
      await session.system.shutdown();
    }
  });
  const details = await fc.check(property, { numRuns: options.runs ?? 50, seed });
  if (!details.failed) return;
  const error = details.errorInstance;
  if (!(error instanceof ModelViolation)) throw error;
  // The violation carries the steps the shrunk sequence ran up to the failure (a step whose
  // precondition did not hold was skipped, and steps after the failure never ran).
  const steps = [...error.steps];
  throw new ModelCheckFailure(error.message, steps, replayCode(steps), seed);
}
