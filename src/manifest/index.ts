/**
 * Document skills: SKILL.md folders (and any implementation of the document-skill interface),
 * their parsing and validation, discovery and registry, progressive disclosure with triggers,
 * the load/list/read tools, toolsets and scripts. This is where skillstate touches the
 * filesystem; `core/` never does.
 */
export { ManifestError } from './errors.js';
export {
  STANDARD_FIELDS,
  SEED_FIELDS,
  MAX_NAME_LENGTH,
  MAX_DESCRIPTION_LENGTH,
  MAX_COMPATIBILITY_LENGTH,
  HOST_FIELDS,
  codePointLength,
  firstSentence,
  type SkillManifest,
  type ManifestSpec,
  type ToolsetRef,
  type ScriptRef,
} from './fields.js';
export { splitFrontMatter, type FrontMatterSplit } from './frontmatter.js';
export { parseSkillManifest, inspectSkillManifest, DEFAULT_MAX_MANIFEST_BYTES, type ParseOptions, type ParsedManifest, type ManifestReport } from './parse.js';
export { validateSkillDir, type ValidationResult } from './validate.js';
export { compileTriggerPattern, type TriggerSpec, type TriggerPattern } from './triggers.js';
export { defineDocumentSkill, type DocumentSkill, type DocumentSkillDefinition, type LoadedSkill, type SkillResource, type ResourceReadOptions } from './document.js';
export { loadSkillFolder, readManifestHead, type FolderSkillResult } from './folder.js';
export {
  DocumentSkillRegistry,
  createDocumentSkillRegistry,
  type SkillEntry,
  type SkillSourceKind,
  type ShadowedSkill,
  type ActivatedSkill,
  type RegistryOptions,
  type SkillChange,
  type SkillWatcher,
  type WatchOptions,
  type RunningAgents,
} from './registry.js';
export {
  discoverSkills,
  scanSkillSources,
  defaultSkillSources,
  exampleSkillNames,
  exampleSkillPath,
  EXAMPLE_SKILLS_DIR,
  BUNDLED_SKILLS_DIR,
  type SkillSources,
  type DiscoverOptions,
  type ScanStats,
} from './discover.js';
export {
  TrustGate,
  defaultTrustFile,
  readTrustFile,
  trustSkillFolders,
  revokeSkillFolders,
  untrustedNotice,
  type TrustPolicy,
  type TrustRecord,
  type TrustFile,
} from './trust.js';
export { validateSkillTree, findSkillFolders } from './validate-tree.js';
export { documentMetadata, type DocumentSkillMetadata } from './spec.js';
export { TriggerIndex, rankMatches, DEFAULT_MAX_QUERY_CHARS, type TriggerMatch, type SkillUsage } from './match.js';
export { disclose, planDisclosure, preloadSkills, CATALOG_QUERY, type Disclosure, type DisclosurePlan, type DiscloseOptions, type Tier } from './disclose.js';
export { CRITICAL_RULES, estimateTokens, type Budget, type Cut, type RootPathMode, type RootPathOptions } from './render.js';
export { escapeInline, wrapBody, CONTENT_TAG } from './escape.js';
export { readSkillResource, DEFAULT_MAX_RESOURCE_BYTES, type ResourceContent } from './resources.js';
export { loadToolsets } from './toolsets.js';
export {
  runSkillScript,
  scriptEnvironment,
  DEFAULT_SCRIPT_TIMEOUT_MS,
  DEFAULT_MAX_OUTPUT_BYTES,
  MAX_SCRIPT_ARGS,
  MAX_SCRIPT_ARG_BYTES,
  ENV_ALLOW_LIST,
  type ScriptOptions,
  type ScriptResult,
  type ScriptOwner,
} from './scripts.js';
export { createSkillTools, type SkillToolsOptions, type LoadSkillOutput } from './tools.js';
export { rankSkills, DEFAULT_CATALOG_BUDGET } from './disclose.js';
export { RelevanceIndex, relevanceTerms, bodyHeadings, strongMatches, DEFAULT_MARGIN, type RelevanceScore, type MarginOptions } from './rank.js';
