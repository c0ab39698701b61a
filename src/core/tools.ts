/**
 * `skillstate/tools`: an agent's actions as function tools, for a model loop of your own (a
 * conversation skill does this for you), and the way back from a tool call to an instruction.
 */
export { toolsForAgent, agentToolset, toolForAction, type Toolset, type ToolBinding, type ToolOptions } from './toolset.js';
export type { FunctionTool, JsonSchema } from './function-tool.js';
