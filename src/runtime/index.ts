/** The process layer: agent systems, agent refs, persistence, tracing, inspection. */
export { createAgentSystem, type AgentSystem } from './system.js';
export type { AgentSystemOptions, SpawnOptions, InspectOption } from './system-runtime.js';
export { ERROR_SIGNAL, DIAGNOSTIC_SIGNAL } from './broadcast.js';
export type { AgentRef, AgentView, AgentSnapshot, ScheduledSignal, AgentStatus, CallOptions, MountReport } from './agent-ref.js';
export { RuntimeError } from './errors.js';
export { createMemoryStore, createFileStore, type SnapshotStore } from './persistence.js';
export type { TraceOption, TraceRecord, TraceLine } from './trace.js';
export { MAX_RUN_DEPTH, type StepOutcome } from './step.js';
export type { LifecycleState } from '../../machines/skill-lifecycle.js';
export { lifecycleSystemId, childSystemId } from '../../machines/skill-lifecycle.js';
export { startInspector, freePort, type InspectorHandle, type InspectorOptions } from './inspection.js';
export { redactInspectionMessage, REDACTED, type InspectionMessage, type InspectionRedactor, type InspectedSnapshot } from '../viewer/messages.js';
