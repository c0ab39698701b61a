/**
 * The lifecycle state of each skill of one agent — active while mounted, inactive once
 * unmounted, failed when its children gave up — kept in one place: snapshots, `getSnapshot`,
 * persistence and the trace all read it from here. The agent machine's lifecycle children act
 * on the same transitions; this book records them as the process sees steps finish and
 * lifecycles report.
 */
import type { MountedSkill } from '../core/agent-value.js';
import type { LifecycleReport, LifecycleState } from '../../machines/skill-lifecycle.js';
import type { Tracer } from './trace.js';

const NONE: readonly string[] = Object.freeze([]);

/** One agent's skill lifecycles. */
export class SkillLifecycles {
  /** Skills whose lifecycle failed (until remounted). Allocated on first need: most agents never have one. */
  private failed: Set<string> | undefined;
  /** Skills unmounted while running: their lifecycle child stays, inactive. */
  private retired: Set<string> | undefined;
  /** The mounted skills as of the last step (lifecycles and the pattern index follow it). */
  private known: readonly MountedSkill[];

  constructor(
    private readonly agentId: string,
    private readonly trace: Tracer | undefined,
    mounted: readonly MountedSkill[],
    /** Lifecycle states of a restored agent. */
    private readonly resume: ReadonlyMap<string, LifecycleState> | undefined,
  ) {
    this.known = mounted;
    if (!resume) return;
    const names = new Set(mounted.map((record) => record.name));
    for (const [skill, state] of resume) {
      // A mounted skill resumes failed or active; one that was unmounted keeps its inactive lifecycle on record.
      if (!names.has(skill)) (this.retired ??= new Set()).add(skill);
      else if (state === 'failed') (this.failed ??= new Set()).add(skill);
    }
  }

  /** The state a restored skill's lifecycle starts in (undefined: active). */
  resumeState(skill: string): LifecycleState | undefined {
    // A mounted skill is active or failed: a snapshot that says anything else is not believed.
    return this.resume?.get(skill) === 'failed' ? 'failed' : undefined;
  }

  /** Skills a restored agent had unmounted: their lifecycles start inactive (none for a new agent). */
  unmountedAtStart(): readonly string[] {
    return this.retired ? [...this.retired] : NONE;
  }

  /** Each skill's lifecycle state: failed, else active while mounted, else inactive once unmounted. */
  states(mounted: readonly MountedSkill[]): Record<string, LifecycleState> {
    const states: Record<string, LifecycleState> = {};
    for (const record of mounted) states[record.name] = this.failed?.has(record.name) ? 'failed' : 'active';
    // Own keys only: a skill named `constructor` would otherwise find Object's and be left out.
    if (this.retired) for (const skill of this.retired) if (!Object.hasOwn(states, skill)) states[skill] = 'inactive';
    return states;
  }

  /** True when every lifecycle is its mounted skill's, active: `states` then says only that. */
  allActive(): boolean {
    return (this.failed === undefined || this.failed.size === 0) && (this.retired === undefined || this.retired.size === 0);
  }

  hasFailed(skill: string): boolean {
    return this.failed?.has(skill) ?? false;
  }

  /** Traces the lifecycles the agent starts with: active, or failed when restored so; inactive for a restored agent's unmounted skills. */
  traceStart(): void {
    if (!this.trace) return;
    for (const { name } of this.known) this.trace({ kind: 'lifecycle', agent: this.agentId, skill: name, state: this.resumeState(name) ?? 'active' });
    if (this.retired) for (const skill of this.retired) this.trace({ kind: 'lifecycle', agent: this.agentId, skill, state: 'inactive' });
  }

  /**
   * Follows the mounted skills after a step: new ones become active, removed ones inactive.
   * Returns the skills that left, or undefined (and does nothing) when the mounted skills did
   * not change.
   */
  follow(mounted: readonly MountedSkill[]): string[] | undefined {
    if (mounted === this.known) return undefined;
    const left: string[] = [];
    const before = new Set(this.known.map((record) => record.name));
    const now = new Set(mounted.map((record) => record.name));
    for (const name of now) {
      if (before.has(name)) continue;
      this.failed?.delete(name);
      this.retired?.delete(name);
      this.trace?.({ kind: 'lifecycle', agent: this.agentId, skill: name, state: 'active' });
    }
    for (const name of before) {
      if (now.has(name)) continue;
      this.failed?.delete(name);
      (this.retired ??= new Set()).add(name);
      this.trace?.({ kind: 'lifecycle', agent: this.agentId, skill: name, state: 'inactive' });
      left.push(name);
    }
    this.known = mounted;
    return left;
  }

  /** A lifecycle child reported a transition (a restart, a failure). */
  reported(report: LifecycleReport): void {
    if (report.state === 'failed') {
      // A lifecycle restored failed reports it as it starts: already recorded (and traced at start).
      if (this.failed?.has(report.skill)) return;
      (this.failed ??= new Set()).add(report.skill);
    }
    if (!this.trace) return;
    const record: Parameters<Tracer>[0] = { kind: 'lifecycle', agent: this.agentId, skill: report.skill, state: report.state };
    if (report.restarted) record.restarted = report.restarted;
    if (report.error) record.error = report.error;
    this.trace(record);
  }
}
