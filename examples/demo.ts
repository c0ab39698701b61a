/**
 * The main demo (`npm start`), on the embedded defaults: no keys, no network, no services.
 * Part one is the pure core: define skills and an agent, run `cmd`, mount and unmount a skill,
 * print the effects and the tools a language model would be given. Part two runs agents as
 * XState actors: send and call signals, mount at run time, parent and child agents,
 * persistence, and a model-based test. Part three is document skills: SKILL.md folders
 * discovered, disclosed to a model tier by tier, loaded with `load_skill`, their resources read
 * and their scripts run. Part four is a model-driven agent: a conversation on the AI SDK, with a
 * scripted stand-in for the model, so it runs offline. Part five keeps an agent durable in an
 * SQLite file (`.skillstate/demo.db`): each `npm start` says how many agents it restored.
 */
import { z } from 'zod';
import { defineAgent, mountSkill, unmountSkill } from 'skillstate';
import { toolsForAgent, agentToolset } from 'skillstate/tools';
import { arithmetic, calculator, counter } from 'skillstate/skills';
import { parentChildTour } from './parent-child.js';
import { persistenceTour } from './persistence.js';
import { documentSkillsTour } from './document-skills.js';
import { modelTestTour } from './model-test.js';
import { modelAgentTour } from './model-agent.js';
import { runtimeTour } from './runtime.js';
import { durableTour } from './durable.js';

const heading = (text: string) => console.log(`\n\x1b[1m== ${text}\x1b[0m`);
/** Short values on one line, lists one item a line, anything longer indented. */
function show(label: string, value: unknown): void {
  const flat = JSON.stringify(value);
  if (flat === undefined || flat.length <= 120) console.log(`${label}: ${flat}`);
  else if (Array.isArray(value)) console.log(`${label}:\n${value.map((item) => `  ${typeof item === 'string' ? item : JSON.stringify(item)}`).join('\n')}`);
  else console.log(`${label}:`, JSON.stringify(value, null, 2));
}

heading('1. Define an agent from skills');
const MathAgent = defineAgent({
  name: 'math_agent',
  description: 'Agent with calculation abilities',
  schema: z.object({ mode: z.enum(['interactive', 'batch']).default('interactive') }),
  skills: [calculator, [counter, { initial: 10, step: 5 }]],
});
let agent = MathAgent.new({ id: 'demo-1' });
show('state after new()', agent.state);
show('mounted skills', agent.mounted);

heading('2. Run instructions with cmd');
const added = await MathAgent.cmd(agent, [
  { action: 'add', params: { a: 1.555, b: 2.5 } },
  { action: 'increment' },
]);
agent = added.agent;
show('results', added.results);
show('state', agent.state);

heading('3. A failing instruction leaves the state as it was');
const failed = await MathAgent.cmd(agent, { action: 'add', params: { a: 'one', b: 2 } });
show('error effect', failed.effects[0]);
console.log('state unchanged:', failed.agent.state === agent.state);

heading('4. Mount a skill at run time');
const mounted = mountSkill(agent, arithmetic);
if (!mounted.ok) throw new Error(mounted.error.message);
show('effects', mounted.effects);
for (const note of mounted.diagnostics) console.log(`note: ${note.message}`);
const divided = await MathAgent.cmd(mounted.agent, { action: 'divide', skill: 'arithmetic', params: { a: 1, b: 0 } });
show('divide by zero', divided.effects[0]);

heading('5. Tools for a language model');
const toolset = agentToolset(mounted.agent, { strict: true });
console.log('tools:', toolset.tools.map((tool) => tool.function.name).join(', '));
for (const note of toolset.diagnostics) console.log(`note: ${note.message}`);
show('one tool', toolsForAgent(mounted.agent)[0]);
const call = toolset.toInstruction('arithmetic_multiply', '{"a": 6, "b": 7}');
if (call.ok) show('tool call → cmd', (await MathAgent.cmd(mounted.agent, call.instruction)).results[0]);

heading('6. Unmount it again');
const unmounted = unmountSkill(mounted.agent, 'arithmetic');
if (!unmounted.ok) throw new Error(unmounted.error.message);
show('effects', unmounted.effects.map((effect) => `${effect.type} ${effect.type === 'deregister_action' ? effect.action : ''}`));
console.log('back to the agent before the mount:', JSON.stringify(unmounted.agent) === JSON.stringify(agent));

heading('7. Agents as actors: send, call, mount at run time');
await runtimeTour();

heading('8. Parent and child agents');
await parentChildTour();

heading('9. Persistence round trip');
await persistenceTour();

heading('10. Model-based test of an agent definition');
await modelTestTour();

heading('11. Document skills');
await documentSkillsTour(console.log, (text) => console.log(`\x1b[2m-- ${text}\x1b[0m`));

heading('12. A model-driven agent (a scripted stand-in model: no key, no network)');
await modelAgentTour(console.log, (text) => console.log(`\x1b[2m-- ${text}\x1b[0m`));

heading('13. Durable agents on SQLite (run npm start again: they come back)');
await durableTour();
