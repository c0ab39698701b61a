/**
 * `skillstate/restate`: agent definitions served as durable Restate virtual objects
 * (`restateAgents`, `serveRestateAgents`), a client with the in-process API's shape
 * (`connectRestate`), and a local Restate server for development and tests
 * (`startRestateServer`). Needs the optional peer dependency `@restatedev/restate-sdk`; the
 * local server needs `@restatedev/restate-server`. See docs/restate.md.
 */
export { restateAgents, type RestateAgentsOptions, type RestateServices } from './host.js';
export type { TurnHostOptions } from './turns.js';
export { serveRestateAgents, type RestateService } from './serve.js';
export { connectRestate, type RestateClient, type RestateAgentRef, type RestateSendOptions } from './client.js';
export { startRestateServer, type LocalRestateServer, type RestateServerOptions } from './server.js';
