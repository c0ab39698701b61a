/**
 * skillstate: an actor-model runtime for agent skills, built on XState v5.
 * Everything a user imports comes from here or from a named subpath.
 */
export * from './core/index.js';
export * from './manifest/index.js';
export * from './runtime/index.js';
