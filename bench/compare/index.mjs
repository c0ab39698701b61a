// The discovery benchmark's comparison libraries, resolved from this folder's own node_modules
// (`npm run bench` installs them here, outside skillstate's install: they declare Node >= 22).
export { Workspace as MastraWorkspace, LocalFilesystem } from '@mastra/core/workspace';
export * as volt from '@voltagent/core';
