/**
 * skillstate: an actor-model runtime for agent skills, built on XState v5.
 *
 * The main entry: what defining and running agents needs (signals, actions, skills, agents, the
 * pure operations on agent values, effects, errors, the agent system, model-driven agents, and
 * loading document skills), and the types that appear in its signatures. The rest of the public
 * surface is in named subpaths (`skillstate/documents`, `skillstate/tools`, `skillstate/inspect`,
 * `skillstate/testing`, ...); everything else is internal. Each name is listed in docs/api.md;
 * test/api.test.ts keeps the two in step and this entry at 40 values or fewer.
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
export { defineAgent, type AgentDefinition, type AgentDefinitionInput, type NewAgentOptions, type DeepPartial } from './core/agent-definition.js';
export type { AgentState, SkillState, SkillConfigInput } from './core/agent-definition.js';
export type { Agent, AgentData, MountedSkill } from './core/agent-value.js';
export { createSkillRegistry, type SkillRegistry, type SkillResolver } from './core/skill-registry.js';
export type { Instruction, InstructionObject, RouteTarget } from './core/instruction.js';
export type { ObjectSchema } from './core/schema.js';
export type { Result } from './core/result.js';

// ── Pure operations on agent values ───────────────────────────────────────────────────────────
export { cmd, type CmdOptions, type CmdResult, type InstructionResult } from './core/cmd.js';
export { mountSkill, mountSkills, unmountSkill, replaceSkill, mountedSkills, isMounted, type MountResult, type WithSkill } from './core/mount.js';

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

// ── Errors and diagnostics ──────────────────────────────────────────────────────────────────
export { SkillstateError, SignalError, RouteError, DefinitionError, StateError, type ErrorCode, type ErrorDetails, type ErrorInfo, type Issue } from './core/errors.js';
export type { Diagnostic, DiagnosticLevel, DiagnosticListener } from './core/diagnostics.js';
export { RuntimeError } from './core/runtime-error.js';
export { ManifestError } from './manifest/errors.js';

// ── Running agents ──────────────────────────────────────────────────────────────────────────
export { createAgentSystem, type AgentSystemOptions } from './system.js';
export type { AgentSystem } from './runtime/system.js';
export type { SpawnOptions, InspectOption } from './runtime/system-runtime.js';
export { ERROR_SIGNAL, DIAGNOSTIC_SIGNAL, CALL_ABORTED_SIGNAL } from './core/system-signals.js';
export type { AgentRef, AgentView, AgentSnapshot, ScheduledSignal, AgentStatus, CallOptions, MountReport } from './runtime/agent-ref.js';
export { createMemoryStore, createFileStore, type SnapshotStore, type DurableStore, type StoreBatch, type StoredAgent, type StoredEntry } from './runtime/persistence.js';
export { createSqliteStore, type SqliteStore, type SqliteStoreOptions } from './runtime/sqlite-store.js';
export type { DurabilityMode } from './runtime/durability.js';
export type { PassivateOptions } from './runtime/passivation.js';
export type { TraceOption, TraceRecord, TraceLine } from './runtime/trace.js';
export type { LifecycleState } from '../machines/skill-lifecycle.js';

// ── Model-driven agents ─────────────────────────────────────────────────────────────────────
export { conversation, chatMessage, ChatSignals, type ConversationConfig, type ConversationSettings, type ConversationState } from './model/conversation.js';
export type { ChatMessage, ChatUsage, TurnRecord, TurnStatus, TurnEnding, PendingToolCall } from './model/conversation.js';
export type { ChatModel, Compactor, CompactionRequest } from './model/models.js';
export type { TelemetryOptions, TelemetryRedactor, TelemetryContentKind } from './telemetry/content.js';

// ── Loading document skills (the rest of the document layer: `skillstate/documents`) ────────────
export { discoverSkills, type SkillSources, type DiscoverOptions } from './manifest/discover.js';
export { createDocumentSkillRegistry, type DocumentSkillRegistry, type RegistryOptions } from './manifest/document-registry.js';
export { defineDocumentSkill, type DocumentSkill, type DocumentSkillDefinition, type LoadedSkill, type SkillResource, type ResourceReadOptions } from './manifest/document.js';
export { createSkillTools, type SkillToolsOptions, type LoadSkillOutput } from './manifest/skill-tools.js';
