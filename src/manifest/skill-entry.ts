/**
 * A registry entry: what is known of a document skill without loading its body (name,
 * descriptions, source, triggers, whether it is enabled), as discovery, disclosure and the
 * document-skill registry share it.
 *
 * Pure: no I/O.
 */
import type { Diagnostic } from '../core/diagnostics.js';
import type { DocumentSkill } from './document.js';
import { catalogDescription, type SkillManifest } from './fields.js';
import type { TriggerSpec } from './triggers.js';

/** Where a skill came from. Discovery precedence: project > user > bundled > extra > example. */
export type SkillSourceKind = 'project' | 'user' | 'bundled' | 'extra' | 'example' | 'path' | 'memory' | 'mcp';

/** A registered skill, as known without loading its body. */
export interface SkillEntry {
  readonly name: string;
  readonly description: string;
  /**
   * What catalogs show (the disclosure, `list_skills`, MCP resources, `skillstate list --json`):
   * the whole description on one line (`catalogDescription`), since its "Use when…" is what a
   * model selects skills by, or `brief_description` in its place when the author gives one.
   */
  readonly briefDescription: string;
  readonly version: string | undefined;
  readonly source: SkillSourceKind;
  readonly rootPath: string | undefined;
  readonly file: string | undefined;
  readonly manifest: SkillManifest | undefined;
  readonly triggers: TriggerSpec;
  /** `default_enabled`: disabled skills are left out of disclosure unless enabled by name. */
  readonly enabled: boolean;
  /**
   * False with `disable-model-invocation: true`: the skill stays out of disclosure, relevance
   * ranking and `list_skills`, and is loaded only by its name (`load_skill`, `preload`).
   */
  readonly modelInvocable: boolean;
  /**
   * Whether the skill may run code: false for a project skill not yet trusted (see `trust.ts`).
   * An untrusted skill is disclosed and readable; its toolsets are not imported, its scripts do not run.
   */
  readonly trusted: boolean;
  /** Where a skill served by an MCP server comes from: the label the app gave the server, and the skill's URI there. */
  readonly origin?: { readonly server: string; readonly uri: string } | undefined;
  readonly skill: DocumentSkill;
  /** Warnings about this skill's manifest. */
  readonly diagnostics: readonly Diagnostic[];
}

/** Builds a registry entry for a document skill. */
export function skillEntry(skill: DocumentSkill, source: SkillSourceKind, diagnostics: readonly Diagnostic[] = [], trusted = true): SkillEntry {
  const manifest = skill.manifest;
  return {
    name: skill.name,
    description: skill.description,
    briefDescription: manifest?.briefDescription ?? catalogDescription(skill.description),
    version: skill.version,
    source,
    rootPath: skill.rootPath,
    file: skill.file,
    manifest,
    triggers: manifest?.triggers ?? { keywords: [], verbs: [], patterns: [] },
    enabled: manifest?.defaultEnabled ?? true,
    modelInvocable: manifest?.disableModelInvocation !== true,
    trusted,
    ...(skill.origin ? { origin: skill.origin } : {}),
    skill,
    diagnostics,
  };
}
