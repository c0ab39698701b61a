/**
 * Who listens to which signal types: a multimap from patterns to members (subscribers, agents)
 * with a trie over the patterns, so finding the listeners of an emitted signal costs a router
 * lookup, however many agents and subscriptions there are. Also the per-catalog facts an
 * agent's registration derives from its skills, computed once per catalog.
 */
import type { Catalog } from '../core/catalog.js';
import { createRouter, type Router } from '../core/router.js';

const listenCache = new WeakMap<Catalog, readonly string[]>();
const registeredCache = new WeakMap<Catalog, readonly string[]>();

/** The registered-action names of a catalog, computed once per catalog and shared by its agents. */
export function registeredNames(catalog: Catalog): readonly string[] {
  let names = registeredCache.get(catalog);
  if (!names) registeredCache.set(catalog, (names = catalog.registeredActions()));
  return names;
}

/** The patterns an agent listens to for emitted signals: its route paths and its skills' signal patterns. */
export function listenPatterns(catalog: Catalog): readonly string[] {
  let patterns = listenCache.get(catalog);
  if (!patterns) {
    const set = new Set<string>();
    for (const route of catalog.router().router.routes()) set.add(route.path);
    for (const active of catalog.skills.values()) for (const pattern of active.spec.signalPatterns) set.add(pattern);
    patterns = [...set];
    listenCache.set(catalog, patterns);
  }
  return patterns;
}

/** A multimap from patterns to members, with a trie over the patterns for lookup by signal type. */
export class PatternIndex<T> {
  private readonly members = new Map<string, Set<T>>();
  private readonly router: Router<string> = createRouter();

  add(pattern: string, member: T): void {
    let set = this.members.get(pattern);
    if (!set) {
      this.members.set(pattern, (set = new Set()));
      this.router.add({ path: pattern, target: pattern });
    }
    set.add(member);
  }

  delete(pattern: string, member: T): void {
    const set = this.members.get(pattern);
    if (!set) return;
    set.delete(member);
    if (set.size === 0) {
      this.members.delete(pattern);
      this.router.remove(pattern);
    }
  }

  /** Removes `member` under every pattern, for a member whose patterns are no longer known. */
  deleteEverywhere(member: T): void {
    for (const [pattern, set] of [...this.members]) if (set.has(member)) this.delete(pattern, member);
  }

  /** Members whose pattern matches `type`, each once. */
  lookup(type: string): Set<T> {
    const found = new Set<T>();
    const routed = this.router.route(type);
    if (routed.ok) for (const match of routed.matches) for (const member of this.members.get(match.target)!) found.add(member);
    return found;
  }

  clear(): void {
    for (const pattern of this.members.keys()) this.router.remove(pattern);
    this.members.clear();
  }
}
