/**
 * The pure layer of skillstate: signals, the matcher and the router, actions, skills, agents,
 * cmd, mount and unmount, effects and tools. Nothing here imports XState or touches the
 * filesystem.
 */
export * from './errors.js';
export * from './diagnostics.js';
export * from './signal.js';
export { matches, matchesAny, patternProblem, compilePattern, type CompiledPattern, type PatternSegment, type SegmentKind } from './pattern.js';
export * from './router.js';
export { isPlainObject, deepMerge } from './plain.js';
export { isObjectSchema, type ObjectSchema } from './schema.js';
export * from './effects.js';
export * from './action.js';
export * from './instruction.js';
export * from './skill.js';
export * from './registry.js';
export { Agent, catalogOf, isAgent, type AgentData, type MountedSkill } from './catalog.js';
export * from './mount.js';
export { ALLOWED_ACTIONS_KEY, isActionAllowed } from './allowed.js';
export { cmd, execute, type CmdOptions, type CmdResult, type InstructionResult } from './cmd.js';
export * from './agent.js';
export * from './tools.js';
