/**
 * Document skills, end to end (`npm run example examples/document-skills.ts`; no network, no keys):
 * discover skillstate's example SKILL.md skills, asked for by name (discovery never adds them
 * unasked; an application passes its own folder as `bundled`), show the four disclosure tiers, load a skill through
 * `cmd` (it is mounted: its toolset's tools become the agent's), read a resource, run a script.
 */
import { cmd, createDocumentSkillRegistry, createSkillTools, defineAgent, discoverSkills } from 'skillstate';
import { disclose, runSkillScript } from 'skillstate/documents';
import { toolsForAgent } from 'skillstate/tools';

export async function documentSkillsTour(
  log: (line: string) => void = console.log,
  heading: (text: string) => void = (text) => log(`\n\x1b[1m== ${text}\x1b[0m`),
): Promise<void> {
  heading("Discover skillstate's example skills, by name (front matter only)");
  const registry = await discoverSkills({ examples: ['csv-tools', 'hello-extended'] });
  for (const entry of registry.entries()) log(`${entry.name} ${entry.version ?? ''} (${entry.source}): ${entry.briefDescription}`);

  heading('Progressive disclosure: four tiers');
  const empty = await disclose(createDocumentSkillRegistry(), 'hello');
  log(`${'(no skills)'.padEnd(24)}→ tier ${empty.tier}, ${empty.chars} chars, offer tools: ${empty.offerTools}`);
  for (const query of ['what is the weather?', 'what can you do?', 'please greet Bob']) {
    const shown = await disclose(registry, query);
    log(`${JSON.stringify(query).padEnd(24)}→ tier ${shown.tier} (${shown.reason}), ${shown.chars} chars${shown.detailed.length ? `, in full: ${shown.detailed.join(', ')}` : ''}`);
  }
  log(`tier 1 text: ${(await disclose(registry, 'what is the weather?')).text}`);

  heading('load_skill through cmd mounts the skill');
  const Assistant = defineAgent({ name: 'assistant', skills: [createSkillTools(registry)], registry });
  const agent = Assistant.new({ id: 'demo' });
  const loaded = await cmd(agent, { action: 'load_skill', params: { name: 'hello-extended' } });
  log(`effects: ${loaded.effects.map((effect) => `${effect.type} ${'action' in effect ? effect.action : ''}`).join(', ')}`);
  log(`tools now: ${toolsForAgent(loaded.agent).map((tool) => tool.function.name).join(', ')}`);
  const hello = await cmd(loaded.agent, { action: 'say_hello', params: { name: 'Ada', style: 'excited' } });
  log(`say_hello → ${JSON.stringify(hello.results[0]?.ok ? hello.results[0].output : hello.results[0])}`);

  heading('Read a resource (and a wrong-case name)');
  const read = await cmd(loaded.agent, { action: 'read_skill_resource', params: { skill: 'csv-tools', path: 'reference.md' } });
  if (read.results[0]?.ok) log((read.results[0].output as { content: string }).content.split('\n').slice(0, 3).join('\n'));
  const wrong = await cmd(loaded.agent, { action: 'read_skill_resource', params: { skill: 'csv-tools', path: 'REFERENCE.md' } });
  if (wrong.results[0] && !wrong.results[0].ok) log(`→ ${wrong.results[0].error.message}`);

  heading('Run a script (no shell, limits on time, output and arguments)');
  const summary = await runSkillScript(registry.entry('csv-tools')!, 'summarize', ['data/sample.csv'], { timeoutMs: 10_000 });
  log(`exit ${summary.exitCode} in ${summary.durationMs.toFixed(0)} ms: ${summary.stdout.trim()}`);
}

if (import.meta.url === `file://${process.argv[1]}`) await documentSkillsTour();
