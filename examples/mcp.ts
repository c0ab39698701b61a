/**
 * MCP both ways, offline (`npm run example examples/mcp.ts`): serve an agent over Streamable HTTP,
 * mount it on another agent as an MCP skill and call it; then mount `skillstate mcp` (the document
 * skills served on stdio) and watch a `load_skill` on the server bring new tools to the client agent.
 */
import { fileURLToPath } from 'node:url';
import { createAgentSystem, defineAgent } from 'skillstate';
import { mcpSkill, serveMcp } from 'skillstate/mcp';
import { counter } from 'skillstate/skills';

const BIN = fileURLToPath(new URL('../bin/skillstate.js', import.meta.url));
const HELLO = fileURLToPath(new URL('../skills/hello-extended', import.meta.url));

export async function mcpTour(log: (line: string) => void = console.log): Promise<void> {
  // Calls get 30 s (not the default 5): the stdio server of step 3 runs from TypeScript sources,
  // and its first load_skill compiles the skill's toolset, which a busy machine takes a while to do.
  const system = createAgentSystem({ callTimeout: 30_000 });
  try {
    // 1. Serve an agent: its tools become MCP tools, on 127.0.0.1, a port the system picks, a bearer token.
    const counting = system.spawn(defineAgent({ name: 'counting', skills: [counter] }), { id: 'counting' });
    const endpoint = await serveMcp(counting, { transport: 'http', token: 'sesame' });
    log(`serving 'counting' at ${endpoint.url!.replace(/:\d+/, ':<port>')}`);

    // 2. Mount it on another agent: the server's tools are the skill's actions.
    const remote = await mcpSkill({ name: 'remote', url: endpoint.url!, headers: { authorization: 'Bearer sesame' } });
    const client = system.spawn(defineAgent({ name: 'client' }), { id: 'client' });
    await client.mount(remote);
    log(`remote actions: ${remote.actions.map((action) => action.name).filter((name) => !name.startsWith('_')).join(', ')}`);
    log(`increment over MCP → ${JSON.stringify(await client.callTool('increment', { by: 5 }))}`);
    log(`the served agent's state: ${JSON.stringify(counting.getSnapshot().state)}`);
    try {
      await client.callTool('increment', { by: 'five' });
    } catch (error) {
      log(`bad arguments, refused before the call: ${(error as { code: string }).code}`);
    }
    await client.unmount('remote');

    // 3. A server on stdio: `skillstate mcp` serving a document skill. Loading it on the server
    //    changes the server's tools; the client agent follows (tools/list_changed).
    // (The server runs with this program's Node options; elsewhere: `command: 'npx', args: ['skillstate', 'mcp', ...]`.)
    const docs = await mcpSkill({
      name: 'docs',
      command: process.execPath,
      args: [...process.execArgv, BIN, 'mcp', '--no-user', '--no-project', '--no-bundled', '--path', HELLO],
      ...(process.env.NODE_OPTIONS ? { env: { NODE_OPTIONS: process.env.NODE_OPTIONS } } : {}),
    });
    await client.mount(docs);
    const names = () => client.toolset().tools.map((tool) => tool.function.name);
    log(`docs tools: ${names().join(', ')}`);
    await client.callTool('load_skill', { name: 'hello-extended' });
    await until(() => names().includes('say_hello'));
    log(`after load_skill: ${names().join(', ')}`);
    log(`say_hello → ${JSON.stringify(await client.callTool('say_hello', { name: 'Ada', style: 'excited' }))}`);
    await client.unmount('docs');
    await endpoint.close();
    log('closed: the stdio server process ended with the unmount');
  } finally {
    await system.shutdown();
  }
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; !check(); i++) {
    if (i > 400) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await mcpTour();
