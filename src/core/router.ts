/**
 * The signal router: a trie over pattern segments. A lookup walks the signal type's segments
 * through the trie, so its cost depends on the type's depth and on the wildcards present, not
 * on how many routes are registered.
 *
 * `route(signal)` returns every matching target, most specific first (exact segment before `*`
 * before `**`, position by position), then by priority (higher first), then insertion order.
 * Matching uses exactly the semantics of `matches()` in `pattern.ts`.
 *
 * Pure: no I/O, no XState. Guards are user code: a guard that throws, or returns anything but
 * `true` or `false` (a promise, undefined), counts as "no match" and is reported in the result,
 * never thrown.
 */
import { closestName } from './closest-name.js';
import { describeThrown, errorInfo, RouteError, type ErrorInfo } from './errors.js';
import { patternProblem, compilePattern, type CompiledPattern } from './pattern.js';
import { isThenable } from './maybe-async.js';
import { describeValue } from './plain.js';
import { cachedSignalTypeSegments, type SignalLike } from './signal.js';

export const MIN_PRIORITY = -100;
export const MAX_PRIORITY = 100;

/** A route: a signal-type pattern, a target (an action or a handler), an optional priority and guard. */
export interface Route<T> {
  /** A pattern: exact segments, `*` (one segment) and `**` (zero or more). */
  path: string;
  target: T;
  /** An integer from -100 to 100; higher runs first among equally specific routes. Default 0. */
  priority?: number;
  /** Optional guard: the route matches only when it returns true. */
  match?: (signal: SignalLike) => boolean;
}

/** A route that matched a signal type, with its target and priority. */
export interface RouteMatch<T> {
  path: string;
  target: T;
  priority: number;
  route: Route<T>;
}

/** What a router answers for a signal: the matches, best first, or the error when none matched. */
export type RouteResult<T> =
  | { ok: true; matches: RouteMatch<T>[]; guardErrors: ErrorInfo[] }
  | { ok: false; error: ErrorInfo; guardErrors: ErrorInfo[] };

/** A router of signal types to targets, made by `createRouter`. */
export interface Router<T> {
  /** Adds one route or several. Throws a `RouteError` naming the path when one is invalid. */
  add(routes: Route<T> | readonly Route<T>[]): Router<T>;
  /** Removes every route with exactly this path; returns how many were removed. */
  remove(path: string): number;
  /** Every target whose route matches the signal, ordered as described above. */
  route(signal: SignalLike | string): RouteResult<T>;
  /** The routes in insertion order. */
  routes(): Route<T>[];
  readonly size: number;
}

interface Entry<T> {
  route: Route<T>;
  compiled: CompiledPattern;
  priority: number;
  order: number;
}

interface TrieNode<T> {
  exact: Map<string, TrieNode<T>> | undefined;
  star: TrieNode<T> | undefined;
  globstar: TrieNode<T> | undefined;
  entries: Entry<T>[];
}

function newNode<T>(): TrieNode<T> {
  return { exact: undefined, star: undefined, globstar: undefined, entries: [] };
}

function byPrecedence<T>(a: Entry<T>, b: Entry<T>): number {
  if (a.compiled.specificity !== b.compiled.specificity) {
    return a.compiled.specificity > b.compiled.specificity ? -1 : 1;
  }
  if (a.priority !== b.priority) return b.priority - a.priority;
  return a.order - b.order;
}

/** Checks a route and returns its priority, or throws a `RouteError` that names the path. */
export function validateRoute(route: Route<unknown>): number {
  if (typeof route !== 'object' || route === null) {
    throw new RouteError({ code: 'invalid_route', message: 'a route must be an object with a path and a target' });
  }
  const problem = patternProblem(route.path);
  if (problem) {
    throw new RouteError({ code: 'invalid_route', message: `invalid route path: ${problem}`, subject: String(route.path) });
  }
  if (route.target === undefined || route.target === null) {
    throw new RouteError({ code: 'invalid_route', message: `route '${route.path}' has no target`, subject: route.path });
  }
  if (route.match !== undefined && typeof route.match !== 'function') {
    throw new RouteError({ code: 'invalid_route', message: `route '${route.path}' has a match guard that is not a function`, subject: route.path });
  }
  const priority = route.priority ?? 0;
  if (!Number.isInteger(priority) || priority < MIN_PRIORITY || priority > MAX_PRIORITY) {
    throw new RouteError({
      code: 'invalid_priority',
      message: `route '${route.path}' has priority ${String(priority)}; it must be an integer from ${MIN_PRIORITY} to ${MAX_PRIORITY}`,
      subject: route.path,
    });
  }
  return priority;
}

/** How many signal types a router remembers the candidates of (then it starts over). */
const REMEMBERED_TYPES = 4_096;

class TrieRouter<T> implements Router<T> {
  private readonly root: TrieNode<T> = newNode();
  private nextOrder = 0;
  private count = 0;
  /**
   * The candidate routes of signal types routed before, in precedence order (guards still run
   * per signal). Agents see the same few types again and again; a hit costs one map lookup
   * whatever the number of routes. Forgotten whenever the routes change.
   */
  private readonly remembered = new Map<string, Entry<T>[]>();

  get size(): number {
    return this.count;
  }

  add(routes: Route<T> | readonly Route<T>[]): Router<T> {
    const list = Array.isArray(routes) ? (routes as readonly Route<T>[]) : [routes as Route<T>];
    // Validate everything first, so a bad route in a list adds nothing.
    const priorities = list.map((route) => validateRoute(route));
    list.forEach((route, i) => this.insert(route, priorities[i]!));
    this.remembered.clear();
    return this;
  }

  private insert(route: Route<T>, priority: number): void {
    const compiled = compilePattern(route.path);
    let node = this.root;
    for (const segment of compiled.segments) {
      if (segment.kind === 'globstar') node = node.globstar ??= newNode();
      else if (segment.kind === 'star') node = node.star ??= newNode();
      else {
        node.exact ??= new Map();
        let child = node.exact.get(segment.value);
        if (!child) node.exact.set(segment.value, (child = newNode()));
        node = child;
      }
    }
    node.entries.push({ route, compiled, priority, order: this.nextOrder++ });
    this.count++;
  }

  remove(path: string): number {
    if (patternProblem(path) !== undefined) return 0;
    const removed = this.removeAt(this.root, compilePattern(path).segments.map((s) => s.value), 0, path);
    this.count -= removed;
    this.remembered.clear();
    return removed;
  }

  /** Removes the entries for `path` below `node`, pruning nodes left empty. */
  private removeAt(node: TrieNode<T>, parts: string[], depth: number, path: string): number {
    if (depth === parts.length) {
      const before = node.entries.length;
      node.entries = node.entries.filter((entry) => entry.route.path !== path);
      return before - node.entries.length;
    }
    const part = parts[depth]!;
    const child = part === '**' ? node.globstar : part === '*' ? node.star : node.exact?.get(part);
    if (!child) return 0;
    const removed = this.removeAt(child, parts, depth + 1, path);
    if (isEmpty(child)) {
      if (part === '**') node.globstar = undefined;
      else if (part === '*') node.star = undefined;
      else node.exact?.delete(part);
    }
    return removed;
  }

  route(signal: SignalLike | string): RouteResult<T> {
    const type = typeof signal === 'string' ? signal : signal?.type;
    let candidates = typeof type === 'string' ? this.remembered.get(type) : undefined;
    if (candidates === undefined) {
      const segments = cachedSignalTypeSegments(type);
      if (segments === undefined) {
        return {
          ok: false,
          error: errorInfo('invalid_signal', `cannot route '${String(type)}': not a valid signal type`, { subject: String(type) }),
          guardErrors: [],
        };
      }
      candidates = [];
      collect(this.root, segments, 0, candidates, undefined);
      if (candidates.length > 1) candidates.sort(byPrecedence);
      if (this.remembered.size >= REMEMBERED_TYPES) this.remembered.clear();
      this.remembered.set(type as string, candidates);
    }

    const subject: SignalLike = typeof signal === 'string' ? { type: signal } : signal;
    const found: RouteMatch<T>[] = [];
    const guardErrors: ErrorInfo[] = [];
    let previous: Entry<T> | undefined;
    for (const entry of candidates) {
      if (entry === previous) continue; // reached twice through different `**` expansions
      previous = entry;
      const guard = entry.route.match;
      if (guard) {
        let decided: unknown;
        try {
          decided = guard(subject);
        } catch (thrown) {
          guardErrors.push(
            errorInfo('guard_failed', `guard of route '${entry.route.path}' threw: ${describeThrown(thrown)}`, {
              subject: entry.route.path,
            }),
          );
          continue;
        }
        if (decided !== true) {
          // Anything but `false` is a guard that cannot decide (an async guard's promise, a
          // forgotten return): passed over like a throw, and said, never silently.
          if (decided !== false) guardErrors.push(undecidedGuard(entry.route.path, decided));
          continue;
        }
      }
      found.push({ path: entry.route.path, target: entry.route.target, priority: entry.priority, route: entry.route });
    }
    if (found.length === 0) {
      return {
        ok: false,
        error: errorInfo('no_route', `no route matches signal '${type}'`, { subject: type as string }),
        guardErrors,
      };
    }
    return { ok: true, matches: found, guardErrors };
  }

  routes(): Route<T>[] {
    const entries: Entry<T>[] = [];
    gather(this.root, entries);
    return entries.sort((a, b) => a.order - b.order).map((entry) => entry.route);
  }
}

/**
 * The route a signal type that no route matches was probably meant for: one without wildcards, a
 * slip away (`counter.increment` for `counter.incremnt`), or undefined (a route of that very type
 * whose guard said no is not a slip). Asked once a step has
 * failed with `no_route`, never by `route()` itself, which runs for every emitted signal and
 * finds no match for most.
 */
export function likelyRoute<T>(router: Router<T>, type: string): string | undefined {
  return closestName(type, router.routes().flatMap((route) => (route.path.includes('*') || route.path === type ? [] : [route.path])));
}

/** The error of a guard that returned something other than true or false. */
function undecidedGuard(path: string, decided: unknown): ErrorInfo {
  const promised = isThenable(decided);
  // An async guard that throws rejects a promise nobody awaits: handled here, it cannot take the process down.
  if (promised) Promise.resolve(decided).catch(() => {});
  const got = promised ? 'a promise (guards decide synchronously)' : decided === undefined ? 'undefined' : describeValue(decided);
  return errorInfo('guard_failed', `guard of route '${path}' returned ${got}, not true or false; the route is passed over`, { subject: path });
}

function isEmpty(node: TrieNode<unknown>): boolean {
  return node.entries.length === 0 && !node.star && !node.globstar && (!node.exact || node.exact.size === 0);
}

function gather<T>(node: TrieNode<T>, into: Entry<T>[]): void {
  into.push(...node.entries);
  node.exact?.forEach((child) => gather(child, into));
  if (node.star) gather(node.star, into);
  if (node.globstar) gather(node.globstar, into);
}

/**
 * Collects the entries of every route matching `segments[index..]` below `node`. A `**` node
 * can be reached at the same index along several paths; `visited` (created on first need)
 * makes each (node, index) pair walk once, which keeps patterns with several `**` linear.
 */
function collect<T>(
  node: TrieNode<T>,
  segments: readonly string[],
  index: number,
  into: Entry<T>[],
  visited: Map<TrieNode<T>, Set<number>> | undefined,
): Map<TrieNode<T>, Set<number>> | undefined {
  if (index === segments.length) {
    for (const entry of node.entries) into.push(entry);
  } else {
    const child = node.exact?.get(segments[index]!);
    if (child) visited = collect(child, segments, index + 1, into, visited);
    if (node.star) visited = collect(node.star, segments, index + 1, into, visited);
  }
  const globstar = node.globstar;
  if (globstar) {
    visited ??= new Map();
    let seen = visited.get(globstar);
    if (!seen) visited.set(globstar, (seen = new Set()));
    for (let k = index; k <= segments.length; k++) {
      if (seen.has(k)) continue;
      seen.add(k);
      visited = collect(globstar, segments, k, into, visited);
    }
  }
  return visited;
}

/** Creates a router, optionally with initial routes. */
export function createRouter<T>(routes: readonly Route<T>[] = []): Router<T> {
  const router = new TrieRouter<T>();
  if (routes.length) router.add(routes);
  return router;
}
