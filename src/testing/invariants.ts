/**
 * The runtime's invariants, checked on a running agent: what every model-test step relies on.
 * Reads snapshots only; never changes the agent.
 */
import type { AnyActorRef } from 'xstate';
import { catalogOf } from '../core/agent-value.js';
import { formatIssues, toIssues } from '../core/errors.js';
import type { AnySkill } from '../core/skill.js';
import type { AgentRef } from '../runtime/agent-ref.js';
import { lifecycleId } from '../../machines/agent.js';

/** The id of a lifecycle child under its agent, before the skill's name. */
const LIFECYCLE_PREFIX = lifecycleId('');

/**
 * Checks the runtime's invariants on a running agent and returns the violations (empty when all
 * hold): registered actions equal the active skills' actions; a slice exists iff its skill is
 * mounted, and matches the skill's schema; a lifecycle is active (or failed) iff its skill is
 * mounted, and agrees with the agent's record; the agent records a lifecycle iff it has its
 * machine; a skill's children run iff it is active. `knownSkills` are skills that may have been
 * mounted at some point: give the skills themselves (or their names) so that a slice left under a
 * state key other than the skill's name is found too.
 */
export function checkAgentInvariants(agent: AgentRef<object>, knownSkills: readonly (string | AnySkill)[] = []): string[] {
  const violations: string[] = [];
  const view = agent.getSnapshot();
  if (view.status === 'stopped') return ['the agent is stopped'];
  const catalog = catalogOf(view.agent);
  if (!catalog) return ['the agent value has lost its catalog'];
  const expectedActions = catalog.registeredActions().sort();
  const registered = [...view.registeredActions].sort();
  if (expectedActions.join() !== registered.join()) {
    violations.push(`registered actions [${registered.join(', ')}] differ from the active skills' actions [${expectedActions.join(', ')}]`);
  }
  const mounted = new Map(view.mounted.map((record) => [record.name, record]));
  const state = view.state as Record<string, unknown>;
  const children = agent.actor.getSnapshot().children as Record<string, AnyActorRef | undefined>;
  const knownKeys = new Map<string, string>();
  for (const skill of knownSkills) if (typeof skill !== 'string') knownKeys.set(skill.name, skill.stateKey);
  const lifecycleMachines = Object.keys(children).filter((id) => id.startsWith(LIFECYCLE_PREFIX)).map((id) => id.slice(LIFECYCLE_PREFIX.length));
  const names = new Set([...knownSkills.map((skill) => (typeof skill === 'string' ? skill : skill.name)), ...mounted.keys(), ...Object.keys(view.lifecycles), ...lifecycleMachines]);
  for (const name of names) {
    const record = mounted.get(name);
    const active = catalog.skills.get(name);
    if (record && !Object.hasOwn(state, record.stateKey)) violations.push(`skill '${name}' is mounted but has no state under '${record.stateKey}'`);
    else if (record && active) {
      const parsed = active.spec.schema.safeParse(state[record.stateKey]);
      if (!parsed.success) violations.push(`skill '${name}': its state under '${record.stateKey}' does not match its schema: ${formatIssues(toIssues(parsed.error.issues))}`);
    }
    if (!record) {
      const key = knownKeys.get(name) ?? catalog.blueprint.resolveSkill(name)?.stateKey ?? name;
      if (Object.hasOwn(state, key) && !catalog.ownKeys.has(key)) violations.push(`skill '${name}' is not mounted but its state '${key}' remains`);
    }
    const lifecycle = children[lifecycleId(name)];
    const value = lifecycle?.getSnapshot().value as string | undefined;
    if (record && value !== 'active' && value !== 'failed') violations.push(`skill '${name}' is mounted but its lifecycle is ${value ?? 'missing'}`);
    if (!record && value !== undefined && value !== 'inactive') violations.push(`skill '${name}' is not mounted but its lifecycle is ${value}`);
    // Own keys only: a skill named `constructor` would otherwise read Object's.
    const recorded = Object.hasOwn(view.lifecycles, name) ? view.lifecycles[name] : undefined;
    if (recorded !== undefined && value !== undefined && recorded !== value) {
      violations.push(`skill '${name}': the agent records its lifecycle as ${recorded}, the lifecycle machine is ${value}`);
    }
    if (recorded !== undefined && value === undefined) {
      violations.push(`skill '${name}': the agent records its lifecycle as ${recorded}, but it has no lifecycle machine`);
    }
    if (recorded === undefined && value !== undefined) {
      violations.push(`skill '${name}' has a lifecycle machine (${value}) the agent does not record`);
    }
    const running = lifecycle ? Object.keys(lifecycle.getSnapshot().children ?? {}).filter((id) => lifecycle.getSnapshot().children[id]?.getSnapshot().status === 'active') : [];
    const plans = active?.spec.children?.(active.config) ?? [];
    if (value === 'active') {
      for (const plan of plans) {
        if ((plan.restart ?? 'permanent') !== 'temporary' && !running.includes(plan.id)) violations.push(`skill '${name}' is active but its child '${plan.id}' is not running`);
      }
    } else if (running.length) {
      violations.push(`skill '${name}' is ${value ?? 'not mounted'} but children run: ${running.join(', ')}`);
    }
  }
  return violations;
}
