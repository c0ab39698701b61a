/**
 * The trie router: runs the shared pattern table, returns every matching target ordered by
 * specificity, then priority, then insertion order; validates routes when they are added;
 * reports guard failures instead of throwing; and stays correct with 10,000 routes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRouter, createSignal, matches, RouteError, type Route, type RouteResult } from '../../src/index.js';
import { PATTERN_CASES } from './pattern.cases.js';
import { thrownBy } from './support.js';

function targets<T>(routed: RouteResult<T>): T[] {
  return routed.ok ? routed.matches.map((m) => m.target) : [];
}

/**
 * The ordering rule, stated independently: compare patterns position by position, an exact
 * segment before `*`, `*` before the pattern's end, the end before `**`; then the higher
 * priority; then the earlier route.
 */
const RANK = (segment: string | undefined): number => (segment === undefined ? 1 : segment === '**' ? 0 : segment === '*' ? 2 : 3);
function referenceOrder(a: { path: string; priority: number; order: number }, b: { path: string; priority: number; order: number }): number {
  const pa = a.path.split('.');
  const pb = b.path.split('.');
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const diff = RANK(pb[i]) - RANK(pa[i]);
    if (diff !== 0) return diff;
  }
  if (a.priority !== b.priority) return b.priority - a.priority;
  return a.order - b.order;
}

describe('the router runs the shared pattern table', () => {
  it.each(PATTERN_CASES.map((c) => [c.pattern.length > 40 ? `${c.pattern.slice(0, 40)}…` : c.pattern, c.type.length > 40 ? `${c.type.slice(0, 40)}…` : c.type, c.expected, c]))(
    'route %s, signal %s → %s',
    (_p, _t, expected, c) => {
      if (c.invalidPattern) {
        const error = thrownBy(() => createRouter([{ path: c.pattern, target: 'T' }]), RouteError, 'invalid_route');
        expect(error.subject).toBe(c.pattern);
        return;
      }
      const routed = createRouter([{ path: c.pattern, target: 'T' }]).route(c.type);
      expect(routed.ok).toBe(expected);
      expect(targets(routed)).toEqual(expected ? ['T'] : []);
      expect(matches(c.type, c.pattern)).toBe(expected);
    },
  );
});

describe('route(signal) returns every match, most specific first', () => {
  it('orders exact before `*` before the end before `**`, position by position', () => {
    // Expected order for `a.b.c`, derived from the rule (rank per position, 3 exact, 2 `*`, 1 end, 0 `**`):
    const expected = ['a.b.c', 'a.b.c.**', 'a.b.*', 'a.b.**', 'a.*.c', 'a.*.*', 'a.**.c', 'a.**', '*.b.c', '**.c', '**'];
    const scrambled = ['**', 'a.**', '*.b.c', 'a.b.*', 'a.*.c', 'a.b.c', '**.c', 'a.**.c', 'a.b.**', 'a.*.*', 'a.b.c.**'];
    const router = createRouter(scrambled.map((path) => ({ path, target: path })));
    expect(targets(router.route('a.b.c'))).toEqual(expected);
  });

  it('puts an exact route before a wildcard one even when the wildcard has the highest priority', () => {
    const router = createRouter([
      { path: 'calculator.*', target: 'any', priority: 100 },
      { path: 'calculator.add', target: 'add', priority: -100 },
    ]);
    expect(targets(router.route('calculator.add'))).toEqual(['add', 'any']);
  });

  it('orders equally specific routes by priority, higher first', () => {
    const router = createRouter([
      { path: 'a.*', target: 'p0' },
      { path: 'a.*', target: 'p50', priority: 50 },
      { path: 'a.*', target: 'm10', priority: -10 },
      { path: 'a.*', target: 'p100', priority: 100 },
    ]);
    expect(targets(router.route('a.x'))).toEqual(['p100', 'p50', 'p0', 'm10']);
  });

  it('orders equal specificity and priority by insertion order, across add() calls', () => {
    const router = createRouter([{ path: 'a', target: 1 }]);
    router.add({ path: 'a', target: 2 }).add([{ path: 'a', target: 3 }]);
    expect(targets(router.route('a'))).toEqual([1, 2, 3]);
  });

  it('agrees with the ordering rule on random routes (property)', () => {
    const route = fc.record({
      path: fc.array(fc.constantFrom('a', 'b', '*', '**'), { minLength: 1, maxLength: 4 }).map((s) => s.join('.')),
      priority: fc.integer({ min: -100, max: 100 }),
    });
    fc.assert(
      fc.property(fc.array(route, { minLength: 1, maxLength: 15 }), fc.array(fc.constantFrom('a', 'b'), { minLength: 1, maxLength: 4 }), (raw, typeSegments) => {
        const type = typeSegments.join('.');
        const routes = raw.filter((r) => !/\*\*\.\*\*/.test(r.path)).map((r, order) => ({ ...r, order }));
        const router = createRouter(routes.map((r) => ({ path: r.path, priority: r.priority, target: r.order })));
        const expected = routes.filter((r) => matches(type, r.path)).sort(referenceOrder).map((r) => r.order);
        expect(targets(router.route(type))).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('reports each match with its path, target, priority (default 0) and route', () => {
    const route: Route<string> = { path: 'a.*', target: 'x' };
    const routed = createRouter([route]).route('a.b');
    expect(routed).toEqual({ ok: true, matches: [{ path: 'a.*', target: 'x', priority: 0, route }], guardErrors: [] });
  });

  it('routes a signal object by its type, the same as its type string', () => {
    const router = createRouter([{ path: 'user.*', target: 'u' }]);
    expect(targets(router.route(createSignal('user.created', { id: 1 })))).toEqual(['u']);
    expect(targets(router.route({ type: 'user.created' }))).toEqual(['u']);
    expect(targets(router.route('user.created'))).toEqual(['u']);
  });
});

describe('priorities', () => {
  it.each([[101], [-101], [1.5], [Number.NaN], [Number.POSITIVE_INFINITY], ['5'], [{}]])('refuses priority %j with invalid_priority naming the path', (priority) => {
    const error = thrownBy(() => createRouter([{ path: 'orders.created', target: 't', priority: priority as number }]), RouteError, 'invalid_priority');
    expect(error.message).toContain("'orders.created'");
    expect(error.subject).toBe('orders.created');
  });

  it.each([[-100], [100], [0], [-0], [42]])('accepts priority %j', (priority) => {
    const routed = createRouter([{ path: 'a', target: 't', priority }]).route('a');
    expect(routed.ok && routed.matches[0]!.priority).toBe(priority);
  });
});

describe('validation when routes are added', () => {
  it.each([[''], ['a..b'], ['**.**'], ['a**'], ['a*b'], ['a b'], ['a.$'], [5], [null], [undefined]])('refuses path %j with invalid_route naming it', (path) => {
    const error = thrownBy(() => createRouter<string>().add({ path: path as string, target: 't' }), RouteError, 'invalid_route');
    expect(error.subject).toBe(String(path));
    expect(error.message).toContain('invalid route path');
  });

  it.each([
    ['a route without a target', { path: 'a.b' }, "route 'a.b' has no target"],
    ['a route with a null target', { path: 'a.b', target: null }, "route 'a.b' has no target"],
    ['a guard that is not a function', { path: 'a.b', target: 't', match: true }, "route 'a.b' has a match guard that is not a function"],
    ['a route that is not an object', 'a.b', 'a route must be an object with a path and a target'],
    ['null', null, 'a route must be an object with a path and a target'],
  ])('refuses %s with invalid_route', (_label, route, message) => {
    expect(thrownBy(() => createRouter<unknown>().add(route as never), RouteError, 'invalid_route').message).toBe(message);
  });

  it('adds nothing from a list that holds one bad route', () => {
    const router = createRouter([{ path: 'keep', target: 'k' }]);
    expect(() => router.add([{ path: 'x.y', target: 'x' }, { path: 'bad..path', target: 'b' }, { path: 'z', target: 'z' }])).toThrow(RouteError);
    expect(router.size).toBe(1);
    expect(router.routes().map((r) => r.path)).toEqual(['keep']);
    expect(router.route('x.y')).toMatchObject({ ok: false, error: { code: 'no_route' } });
    expect(() => createRouter([{ path: 'a', target: 1 }, { path: 'b', target: 2, priority: 500 }])).toThrow(RouteError);
  });
});

describe('guards', () => {
  it('excludes a route whose guard returns false, and passes the signal to the guard', () => {
    const seen: unknown[] = [];
    const router = createRouter([
      {
        path: 'order.*',
        target: 'big',
        match: (signal) => {
          seen.push(signal);
          return (signal.data as { total: number }).total > 100;
        },
      },
      { path: 'order.*', target: 'any' },
    ]);
    const small = createSignal('order.placed', { total: 5 });
    expect(targets(router.route(small))).toEqual(['any']);
    expect(seen).toEqual([small]);
    expect(targets(router.route(createSignal('order.placed', { total: 500 })))).toEqual(['big', 'any']);
  });

  it('counts only `true` as a pass (a truthy value is not enough)', () => {
    const router = createRouter([{ path: 'a', target: 'x', match: () => 1 as unknown as boolean }]);
    expect(router.route('a')).toMatchObject({ ok: false, error: { code: 'no_route' } });
  });

  it('treats a guard that throws as no match, reports it in guardErrors, and still returns the other matches', () => {
    const router = createRouter([
      { path: 'job.*', target: 'fragile', match: () => { throw new Error('guard exploded'); } },
      { path: 'job.*', target: 'stringly', match: () => { throw 'just a string'; } },
      { path: 'job.done', target: 'exact' },
    ]);
    const routed = router.route('job.done');
    expect(routed.ok).toBe(true);
    expect(targets(routed)).toEqual(['exact']);
    expect(routed.guardErrors).toEqual([
      { code: 'guard_failed', message: "guard of route 'job.*' threw: guard exploded", subject: 'job.*' },
      { code: 'guard_failed', message: "guard of route 'job.*' threw: just a string", subject: 'job.*' },
    ]);
  });

  it('reports a throwing guard even when nothing else matches', () => {
    const routed = createRouter([{ path: 'a', target: 'x', match: () => { throw null; } }]).route('a');
    expect(routed.ok).toBe(false);
    expect(routed.guardErrors).toEqual([{ code: 'guard_failed', message: "guard of route 'a' threw: null", subject: 'a' }]);
  });
});

describe('signals that cannot be routed are results, not exceptions', () => {
  it('no matching route → { ok: false, error.code: no_route } naming the type', () => {
    const routed = createRouter([{ path: 'a.b', target: 1 }]).route('a.c');
    expect(routed).toEqual({ ok: false, error: { code: 'no_route', message: "no route matches signal 'a.c'", subject: 'a.c' }, guardErrors: [] });
  });

  it('an empty router has no route for anything', () => {
    expect(createRouter().route('a')).toMatchObject({ ok: false, error: { code: 'no_route' } });
  });

  it.each([[''], ['a..b'], ['a.*'], [null], [undefined], [42], [{}], [{ type: 5 }], [[]]])('an invalid signal (%j) → invalid_signal', (signal) => {
    const routed = createRouter([{ path: '**', target: 1 }]).route(signal as never);
    expect(routed.ok).toBe(false);
    expect(!routed.ok && routed.error.code).toBe('invalid_signal');
  });
});

describe('remove, routes and size', () => {
  it('removes every route with that exact path, returns how many, and leaves the rest working', () => {
    const router = createRouter([
      { path: 'a.*', target: 1 },
      { path: 'a.b', target: 2 },
      { path: 'a.*', target: 3, priority: 9 },
      { path: 'a.**', target: 4 },
    ]);
    expect(router.remove('a.*')).toBe(2);
    expect(router.size).toBe(2);
    expect(targets(router.route('a.b'))).toEqual([2, 4]);
    expect(router.routes().map((r) => r.target)).toEqual([2, 4]);
    expect(router.remove('a.*')).toBe(0);
  });

  it('removes nothing for a path it does not hold, or an invalid one', () => {
    const router = createRouter([{ path: 'a.b', target: 1 }]);
    expect(router.remove('a')).toBe(0);
    expect(router.remove('a.b.c')).toBe(0);
    expect(router.remove('a..b')).toBe(0);
    expect(router.remove(5 as unknown as string)).toBe(0);
    expect(router.size).toBe(1);
  });

  it('can add a path again after removing it', () => {
    const router = createRouter([{ path: 'x.**', target: 'old' }]);
    router.remove('x.**');
    expect(router.route('x.y')).toMatchObject({ ok: false, error: { code: 'no_route' } });
    router.add({ path: 'x.**', target: 'new' });
    expect(targets(router.route('x.y'))).toEqual(['new']);
  });

  it('lists routes in insertion order, as given', () => {
    const list: Route<number>[] = [
      { path: 'z', target: 1 },
      { path: '**', target: 2 },
      { path: 'a.*', target: 3, priority: 5 },
    ];
    const router = createRouter(list);
    expect(router.routes()).toEqual(list);
    expect(router.size).toBe(3);
  });
});

describe('10,000 routes', () => {
  it('route every one of 10,000 exact paths to its own target plus the shared wildcard', () => {
    const router = createRouter<string>();
    for (let i = 0; i < 10_000; i++) router.add({ path: `svc.n${i}.event`, target: `t${i}` });
    router.add({ path: 'svc.*.event', target: 'any' });
    expect(router.size).toBe(10_001);
    for (let i = 0; i < 10_000; i++) expect(targets(router.route(`svc.n${i}.event`))).toEqual([`t${i}`, 'any']);
    expect(targets(router.route('svc.n10000.event'))).toEqual(['any']);
    expect(router.remove('svc.n5000.event')).toBe(1);
    expect(targets(router.route('svc.n5000.event'))).toEqual(['any']);
    expect(targets(router.route('svc.n5001.event'))).toEqual(['t5001', 'any']);
  });

  it('returns 10,000 routes of the same path in insertion order', () => {
    const router = createRouter(Array.from({ length: 10_000 }, (_, i) => ({ path: 'same.path', target: i })));
    expect(targets(router.route('same.path'))).toEqual(Array.from({ length: 10_000 }, (_, i) => i));
    expect(router.remove('same.path')).toBe(10_000);
    expect(router.size).toBe(0);
  });
});
