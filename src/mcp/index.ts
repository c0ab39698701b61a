/**
 * `skillstate/mcp`: the Model Context Protocol both ways, on the official TypeScript SDK.
 *
 * - Serve: `serveMcp(agent, { transport })` offers a running agent's tools as MCP tools, its
 *   document skills as resources and the disclosure as a prompt, over stdio or Streamable HTTP;
 *   `createMcpServer` gives the SDK server for a transport of your own.
 * - Consume: `mcpSkill({ name, command } | { name, url })` turns an MCP server into a skill whose
 *   actions are the server's tools; its client connection is the skill's supervised child.
 *   `mountMcpSkills(registry, { name, command } | { name, url })` registers the skills a server
 *   publishes under the Skills extension as untrusted document skills, each file verified on read.
 *
 * A subpath of its own, so the SDK is loaded only by programs that import it.
 */
export { createMcpServer, type McpTarget, type McpServerOptions } from './server.js';
export { serveMcp, type ServeMcpOptions, type StdioServeOptions, type HttpServeOptions, type McpEndpoint } from './serve.js';
export { SKILL_SCHEME, DISCLOSURE_PROMPT, skillResourceUri } from './documents.js';
export { mcpSkill, type McpSkillOptions, type McpStdioSkillOptions, type McpHttpSkillOptions } from './skill.js';
export { mountMcpSkills, type McpSkillsOptions, type McpSkillsMount } from './remote-skills.js';
export type { McpFailureReason } from './connection.js';
