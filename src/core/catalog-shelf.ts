/**
 * The catalogs a definition's restored agents share. A catalog (the router, the compiled state
 * schema, the action index) depends only on the definition and the skills mounted with their
 * configs, and agents never change theirs, so agents restored with the same skills and configs
 * share one, as the agents `new()` makes share the definition's own: restoring many agents then
 * builds a handful of catalogs, not one each.
 *
 * Pure: no I/O, no XState.
 */
import type { MountedSkill } from './agent-value.js';
import type { ActiveSkill, Catalog } from './catalog.js';
import { sameData } from './plain.js';

/** A catalog and the frozen list of mounted skills its agents hold (shared too: agent values are immutable). */
export interface SharedCatalog {
  readonly catalog: Catalog;
  readonly mounted: MountedSkill[];
}

/**
 * How many different sets of mounted skills one definition keeps catalogs for. Past it, a restored
 * agent with yet another set builds a catalog of its own, as before sharing: memory stays bounded
 * when every agent is configured differently.
 */
export const SHELF_SIZE = 64;

/** The shared catalogs of one definition, found by the skills mounted (the same skill objects, in the same order, with equal configs). */
export class CatalogShelf {
  /** By the mounted skills' names in order; a few entries per key at most. */
  private readonly byNames = new Map<string, SharedCatalog[]>();
  private count = 0;

  /** The shared catalog for exactly these skills and configs, if there is one. */
  find(skills: readonly ActiveSkill[]): SharedCatalog | undefined {
    const candidates = this.byNames.get(namesKey(skills));
    return candidates?.find((shared) => holdsExactly(shared.catalog, skills));
  }

  /** Keeps `shared` for the agents restored after, while there is room. */
  add(shared: SharedCatalog): void {
    if (this.count >= SHELF_SIZE) return;
    const key = namesKey([...shared.catalog.skills.values()]);
    const list = this.byNames.get(key);
    if (list) list.push(shared);
    else this.byNames.set(key, [shared]);
    this.count++;
  }
}

function namesKey(skills: readonly ActiveSkill[]): string {
  // Skill names are letters, digits, "_" and "-": a space cannot be part of one.
  return skills.map((active) => active.spec.name).join(' ');
}

/** True when the catalog's skills are these, in this order: the same skill objects, configs equal as data. */
function holdsExactly(catalog: Catalog, skills: readonly ActiveSkill[]): boolean {
  if (catalog.skills.size !== skills.length) return false;
  let index = 0;
  for (const held of catalog.skills.values()) {
    const wanted = skills[index++]!;
    if (held.spec !== wanted.spec || !sameData(held.config, wanted.config)) return false;
  }
  return true;
}
