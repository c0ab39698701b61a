/**
 * skillstate: an actor-model runtime for agent skills, built on XState v5.
 *
 * This is the public surface: what the README and docs/ teach, and the types that appear in
 * its signatures. Everything else is internal (tests import it by path). Each name is listed in
 * docs/api.md; test/api.test.ts keeps the two in step.
 */

// ── Signals ─────────────────────────────────────────────────────────────────────────────────
export { createSignal, type Signal, type SignalLike, type CreateSignalOptions } from './core/signal.js';
export { matches } from './core/pattern.js';
export { createRouter, type Route, type RouteMatch, type RouteResult, type Router } from './core/router.js';

// ── Actions, skills, agents ───────────────────────────────────────────────────────────────────
export {
  defineAction,
  result,
  fail,
  type ActionSpec,
  type AnyAction,
  type ActionContext,
  type ActionChanges,
  type ActionResult,
  type ActionFailure,
  type ActionDefinition,
  type SkillHandle,
} from './core/action.js';
export {
  defineSkill,
  Decision,
  getSpec,
  type SkillSpec,
  type AnySkill,
  type SkillAttachment,
  type SkillDefinition,
  type SkillHookContext,
  type SignalDecision,
  type MountOutcome,
  type ChildSpec,
  type RestartPolicy,
  type ActorLogicLike,
  type SkillSummary,
} from './core/skill.js';
export {
  defineAgent,
  type AgentDefinition,
  type AgentDefinitionInput,
  type AgentState,
  type SkillState,
  type SkillConfigInput,
  type DeepPartial,
  type NewAgentOptions,
} from './core/agent-definition.js';
export { Agent, type AgentData, type MountedSkill } from './core/agent-value.js';
export { createSkillRegistry, type SkillRegistry, type SkillResolver } from './core/skill-registry.js';
export type { Instruction, InstructionObject, RouteTarget } from './core/instruction.js';
export type { ObjectSchema } from './core/schema.js';
export type { Result } from './core/result.js';

// ── Pure operations on agent values ───────────────────────────────────────────────────────────
export { cmd, execute, type CmdOptions, type CmdResult, type InstructionResult } from './core/cmd.js';
export { mountSkill, mountSkills, unmountSkill, replaceSkill, mountedSkills, isMounted, type MountResult, type WithSkill } from './core/mount.js';
export type { InvokeUserCode, UserCodeCall } from './core/invoke.js';

// ── Effects ─────────────────────────────────────────────────────────────────────────────────
export {
  Effects,
  type Effect,
  type EffectType,
  type EffectMeta,
  type RegisterActionEffect,
  type DeregisterActionEffect,
  type RunEffect,
  type ReplyEffect,
  type DeferReplyEffect,
  type EmitEffect,
  type SpawnEffect,
  type StopEffect,
  type ScheduleEffect,
  type ErrorEffect,
} from './core/effects.js';

// ── Tools for language models ─────────────────────────────────────────────────────────────────
export { toolsForAgent, agentToolset, toolForAction, type Toolset, type ToolBinding, type ToolOptions } from './core/toolset.js';
export type { FunctionTool, JsonSchema } from './core/function-tool.js';

// ── Errors and diagnostics ──────────────────────────────────────────────────────────────────
export { SkillstateError, SignalError, RouteError, DefinitionError, StateError, type ErrorCode, type ErrorDetails, type ErrorInfo, type Issue } from './core/errors.js';
export type { Diagnostic, DiagnosticLevel, DiagnosticListener } from './core/diagnostics.js';
export { RuntimeError } from './runtime/errors.js';
export { ManifestError } from './manifest/errors.js';

// ── Running agents ──────────────────────────────────────────────────────────────────────────
export { createAgentSystem, type AgentSystem } from './runtime/system.js';
export type { AgentSystemOptions, SpawnOptions, InspectOption } from './runtime/system-runtime.js';
export { ERROR_SIGNAL, DIAGNOSTIC_SIGNAL, CALL_ABORTED_SIGNAL } from './runtime/broadcast.js';
export type { AgentRef, AgentView, AgentSnapshot, ScheduledSignal, AgentStatus, CallOptions, MountReport } from './runtime/agent-ref.js';
export { createMemoryStore, createFileStore, type SnapshotStore } from './runtime/persistence.js';
export type { TraceOption, TraceRecord, TraceLine } from './runtime/trace.js';
export { startInspector, type InspectorHandle, type InspectorOptions, type InspectorStopped } from './runtime/inspection.js';
export { redactInspectionMessage, REDACTED, type InspectionMessage, type InspectionRedactor, type InspectedSnapshot } from './viewer/messages.js';
export { lifecycleSystemId, childSystemId, type LifecycleState } from '../machines/skill-lifecycle.js';

// ── Model-driven agents ─────────────────────────────────────────────────────────────────────
export {
  conversation,
  chatMessage,
  ChatSignals,
  type ConversationConfig,
  type ConversationSettings,
  type ConversationState,
  type ChatMessage,
  type ChatUsage,
  type TurnRecord,
  type TurnStatus,
  type TurnEnding,
  type PendingToolCall,
} from './model/conversation.js';
export type { ChatModel, Compactor, CompactionRequest } from './model/models.js';
export type { TurnPhase } from './model/turn-machine.js';

// ── Document skills ─────────────────────────────────────────────────────────────────────────
export { parseSkillManifest, inspectSkillManifest, type ParseOptions, type ParsedManifest, type ManifestReport } from './manifest/parse.js';
export type { SkillManifest, ManifestSpec, ToolsetRef, ScriptRef } from './manifest/fields.js';
export { validateSkillDir, type ValidationResult } from './manifest/validate.js';
export type { TriggerSpec, TriggerPattern } from './manifest/triggers.js';
export { defineDocumentSkill, type DocumentSkill, type DocumentSkillDefinition, type LoadedSkill, type SkillResource, type ResourceReadOptions } from './manifest/document.js';
export {
  DocumentSkillRegistry,
  createDocumentSkillRegistry,
  type ShadowedSkill,
  type ActivatedSkill,
  type RegistryOptions,
  type SkillChange,
  type SkillWatcher,
  type WatchOptions,
  type RunningAgents,
} from './manifest/document-registry.js';
export type { SkillEntry, SkillSourceKind } from './manifest/skill-entry.js';
export { discoverSkills, defaultSkillSources, type DefaultSkillSourcesOptions, BUNDLED_SKILLS_DIR, EXAMPLE_SKILLS_DIR, exampleSkillNames, exampleSkillPath, type SkillSources, type DiscoverOptions, type ScanStats } from './manifest/discover.js';
export type { TrustPolicy } from './manifest/trust.js';
export type { DocumentSkillMetadata } from './manifest/spec.js';
export type { AllowedToolEntry } from './manifest/allowed-tools.js';
export type { TriggerMatch, SkillUsage } from './manifest/match.js';
export { disclose, rankSkills, DEFAULT_CATALOG_BUDGET, type Disclosure, type DisclosurePlan, type DiscloseOptions, type Tier } from './manifest/disclose.js';
export type { Budget, Cut, RootPathMode, RootPathOptions } from './manifest/render.js';
export type { ResourceContent } from './manifest/resources.js';
export { runSkillScript, ENV_ALLOW_LIST, type ScriptOptions, type ScriptResult, type ScriptOwner } from './manifest/scripts.js';
export { createSkillTools, type SkillToolsOptions, type LoadSkillOutput } from './manifest/skill-tools.js';
