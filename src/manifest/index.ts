/**
 * `skillstate/documents`: the document-skill layer beyond loading skills. Reading and checking a
 * SKILL.md, the registry's parts (entries, watchers, trust), the default and example skill
 * folders, disclosure, resources and scripts.
 *
 * Loading skills (`discoverSkills`, `createDocumentSkillRegistry`, `defineDocumentSkill`,
 * `createSkillTools`) and `ManifestError` are in the main entry, `skillstate`.
 */
export { parseSkillManifest, inspectSkillManifest, type ParseOptions, type ParsedManifest, type ManifestReport } from './parse.js';
export type { SkillManifest, ManifestSpec, ToolsetRef, ScriptRef } from './fields.js';
export { validateSkillDir, type ValidateOptions, type ValidationResult } from './validate.js';
export type { TriggerSpec } from './triggers.js';
export type { ShadowedSkill, ActivatedSkill, SkillChange, SkillWatcher, WatchOptions, RunningAgents } from './document-registry.js';
export type { SkillEntry, SkillSourceKind } from './skill-entry.js';
export { defaultSkillSources, EXAMPLE_SKILLS_DIR, exampleSkillNames, exampleSkillPath, type DefaultSkillSourcesOptions } from './discover.js';
export type { TrustPolicy } from './trust.js';
export type { DocumentSkillMetadata } from './spec.js';
export type { AllowedToolEntry } from './allowed-tools.js';
export type { TriggerMatch, SkillUsage } from './match.js';
export { disclose, DEFAULT_CATALOG_BUDGET, type Disclosure, type DiscloseOptions, type Tier } from './disclose.js';
export type { Budget, Cut, RootPathMode, RootPathOptions } from './render.js';
export type { ResourceContent } from './resources.js';
export { runSkillScript, type ScriptOptions, type ScriptResult, type ScriptOwner } from './scripts.js';
