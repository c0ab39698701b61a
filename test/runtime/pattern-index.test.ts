/**
 * The index of the signal patterns agents listen to: who hears a signal type, each once, and an
 * agent taken out of it by id when its patterns are no longer known (a passivated agent dropped
 * because it could not be woken).
 */
import { describe, expect, it } from 'vitest';
import { PatternIndex } from '../../src/runtime/pattern-index.js';

describe('PatternIndex', () => {
  it('finds each member whose pattern matches a type, once, and forgets a member by pattern', () => {
    const index = new PatternIndex<string>();
    index.add('news.*', 'a');
    index.add('news.today', 'a');
    index.add('news.*', 'b');
    expect([...index.lookup('news.today')].sort()).toEqual(['a', 'b']);
    expect([...index.lookup('weather.today')]).toEqual([]);
    index.delete('news.*', 'a');
    expect([...index.lookup('news.today')].sort()).toEqual(['a', 'b']);
    expect([...index.lookup('news.tomorrow')]).toEqual(['b']);
  });

  it('takes a member out under every pattern at once, leaving the others', () => {
    const index = new PatternIndex<string>();
    index.add('news.*', 'a');
    index.add('news.today', 'a');
    index.add('alerts.**', 'a');
    index.add('news.*', 'b');
    expect([...index.lookup('alerts.fire.now')]).toEqual(['a']);
    index.deleteEverywhere('a');
    expect([...index.lookup('news.today')]).toEqual(['b']);
    expect([...index.lookup('alerts.fire.now')]).toEqual([]);
    index.deleteEverywhere('nobody');
    expect([...index.lookup('news.today')]).toEqual(['b']);
  });
});
