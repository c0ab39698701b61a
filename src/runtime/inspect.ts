/**
 * `skillstate/inspect`: watching running agents. `startInspector` serves the local viewer (or
 * connects the Stately inspector) and gives the `inspect` option of `createAgentSystem`; what
 * leaves the process can be redacted.
 */
export { startInspector, type InspectorHandle, type InspectorOptions, type InspectorStopped } from './inspection.js';
export { redactInspectionMessage, type InspectionMessage, type InspectionRedactor, type InspectedSnapshot } from '../viewer/messages.js';
