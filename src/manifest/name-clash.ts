/**
 * Name clashes within a discovery scan: two skill folders claiming one name (equal after NFKC).
 * Sources are scanned from the most specific, so the skill of a more specific source keeps the
 * name. Within one source, a skill whose folder bears its name wins over one whose folder does
 * not, since the specification requires a skill's folder to be named as the skill; between two
 * alike, the first found in scan order keeps it. The loser is reported in a `skill_shadowed`
 * warning naming both folders, which was kept and why.
 *
 * Pure: no I/O.
 */
import path from 'node:path';
import { diagnostic, type Diagnostic } from '../core/diagnostics.js';
import type { SkillEntry } from './skill-entry.js';

/** A skill holding its name in a scan, and the source folder it was found under. */
export interface Claim {
  entry: SkillEntry;
  root: string;
}

/**
 * Why a name clash was settled as it was: `source`, the more specific source wins; within one
 * source, `folder_name`, the skill whose folder is named as the skill (the specification requires
 * it) wins over one whose folder is not; otherwise `first_found`, the first in scan order.
 */
export type ClashReason = 'source' | 'folder_name' | 'first_found';

/** A clash settled: the claim that keeps the name, the skill that lost it, and why. */
export interface SettledClash {
  kept: Claim;
  lost: SkillEntry;
  reason: ClashReason;
}

/** True when the skill's folder bears its name, compared after NFKC as the specification's rule is. */
function namedAsFolder(entry: SkillEntry): boolean {
  if (entry.rootPath === undefined) return false;
  return path.basename(entry.rootPath).normalize('NFKC') === (entry.manifest?.name ?? entry.name).normalize('NFKC');
}

/**
 * Settles a clash between the skill holding a name (`held`, found earlier in the scan) and another
 * skill claiming it (`claim`). Sources are scanned from the most specific, so one found earlier in
 * another source keeps the name. Within one source, a skill whose folder does not bear its name
 * (`archive-report/` holding `name: report`) gives way to one whose folder does (`report/`),
 * whichever was found first; between two alike, the first found keeps it.
 */
export function settleClash(held: Claim, claim: Claim): SettledClash {
  if (held.root !== claim.root) return { kept: held, lost: claim.entry, reason: 'source' };
  const heldNamed = namedAsFolder(held.entry);
  const claimNamed = namedAsFolder(claim.entry);
  if (claimNamed && !heldNamed) return { kept: claim, lost: held.entry, reason: 'folder_name' };
  if (heldNamed && !claimNamed) return { kept: held, lost: claim.entry, reason: 'folder_name' };
  return { kept: held, lost: claim.entry, reason: 'first_found' };
}

/** The `skill_shadowed` warning of a settled clash: both skills, which was kept, and why. */
export function shadowedDiagnostic({ kept: { entry: kept }, lost, reason }: SettledClash): Diagnostic {
  const normalised = kept.name === lost.name ? '' : `, whose name '${kept.name}' is the same once normalised (NFKC)`;
  const why =
    reason === 'folder_name'
      ? `; both folders hold a skill named '${lost.manifest?.name ?? lost.name}', and ${kept.rootPath} is kept because its folder bears the skill's name, as the specification requires, and ${lost.rootPath} does not (rename the folder or the skill)`
      : '';
  return diagnostic('warning', 'skill_shadowed', `skill '${lost.name}' in ${lost.source} (${lost.rootPath}) is shadowed by ${kept.source} (${kept.rootPath})${normalised}${why}`, {
    skill: lost.name,
    subject: lost.rootPath,
    details: { kept: kept.rootPath, keptSource: kept.source, shadowed: lost.rootPath, shadowedSource: lost.source, reason },
  });
}
