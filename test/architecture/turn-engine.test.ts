/**
 * Both hosts ask the one turn engine what a turn does next: the in-process driver and the Restate
 * turn object import its moves and decide none of them themselves (no limit, budget, compaction
 * or retry rule is read outside it).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importGraph } from './imports.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const graph = importGraph(root, ['src']);
const HOSTS = ['src/model/driver.ts', 'src/restate/turns.ts'];
const source = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

describe('one turn engine', () => {
  it.each(HOSTS)('%s asks the turn engine for every move', (file) => {
    expect(graph.files.get(file)?.local).toContain('src/model/turn-engine.ts');
    const text = source(file);
    for (const move of ['nextMove(', 'planCalls(', 'afterModelFailure(']) expect(text, `${file} calls ${move}`).toContain(move);
  });

  it.each(HOSTS)('%s reads no rule the engine owns', (file) => {
    const rules = /settings\.(maxSteps|maxToolCalls|maxTokens|retries|retryDelay|history)\b|\b(callsRun|keepFrom|retryWait|toolLimit|overBudget|unknownModel)\(/g;
    expect(source(file).match(rules) ?? []).toEqual([]);
  });

  it('the engine is pure: no XState, no Node module, no clock or random id of its own', () => {
    const engine = graph.files.get('src/model/turn-engine.ts')!;
    expect(engine.external.filter((name) => name === 'xstate' || name.startsWith('node:') || name === 'nanoid')).toEqual([]);
    expect(source('src/model/turn-engine.ts')).not.toMatch(/Date\.now|new Date|Math\.random|setTimeout/);
  });
});
