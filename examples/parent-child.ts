/**
 * Parent and child agents: a supervisor spawns workers through `spawn` effects, hands them
 * jobs by emitting signals, and stopping the supervisor stops the workers.
 * Run: npm run example examples/parent-child.ts
 */
import { z } from 'zod';
import { Effects, createAgentSystem, createSignal, defineAction, defineAgent, defineSkill, result } from 'skillstate';

const jobs = z.object({ done: z.array(z.string()).default([]) });
const work = defineAction({
  name: 'work',
  description: 'Do a job and report it',
  input: z.object({ job: z.string() }),
  state: jobs,
  run: ({ job }, ctx) => result({ job }, { state: { done: [...ctx.skillState.done, job] }, effects: [Effects.emit(createSignal('jobs.done', { job, by: ctx.agentId }))] }),
});
const worker = defineSkill({ name: 'worker', schema: jobs, actions: [work], routes: [{ path: 'jobs.assign', target: { action: 'work' } }] });
export const Worker = defineAgent({ name: 'worker_agent', skills: [worker] });

const hire = defineAction({
  name: 'hire',
  description: 'Start a worker',
  input: z.object({ id: z.string() }),
  run: ({ id }) => result({ hired: id }, { effects: [Effects.spawn('worker_agent', { id })] }),
});
export const Supervisor = defineAgent({ name: 'supervisor', actions: [hire], routes: [{ path: 'team.hire', target: { action: 'hire' } }] });

export async function parentChildTour(log: (line: string) => void = console.log): Promise<void> {
  const system = createAgentSystem({ definitions: [Worker] });
  system.subscribe('jobs.done', (signal) => log(`done: ${JSON.stringify(signal.data)}`));
  const boss = system.spawn(Supervisor, { id: 'boss' });
  await boss.call(createSignal('team.hire', { id: 'w1' }));
  await boss.call(createSignal('team.hire', { id: 'w2' }));
  log(`boss's children: ${boss.children().join(', ')}`);

  // Workers route jobs.assign; a published signal reaches every agent whose routes match.
  system.publish(createSignal('jobs.assign', { job: 'paint the fence' }));
  await new Promise((resolve) => setTimeout(resolve, 0));
  log(`w1 did ${JSON.stringify(system.get('w1')!.getSnapshot().state)}`);

  await boss.stop();
  log(`after stopping boss, running agents: ${system.list().length}`);
  await system.shutdown();
}

if (import.meta.url === `file://${process.argv[1]}`) await parentChildTour();
