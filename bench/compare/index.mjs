// The libraries the benchmarks compare skillstate with, resolved from this folder's own
// node_modules (`npm run bench` installs them here, outside skillstate's install: they declare
// Node >= 22).
import './production.mjs';
export { Workspace as MastraWorkspace, LocalFilesystem } from '@mastra/core/workspace';
export { Agent as MastraAgent } from '@mastra/core/agent';
export { createTool as mastraTool } from '@mastra/core/tools';
export * as volt from '@voltagent/core';
