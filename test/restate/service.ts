/**
 * A service process serving the test agents on the Restate host: `node --import tsx service.ts
 * <port>`. Prints `listening <port>` once it accepts connections.
 */
import { serveRestateAgents } from '../../src/restate/index.js';
import { compactors, definitions, models, resolvers, skills } from './agents.js';

const service = await serveRestateAgents({ definitions, skills, resolvers, models, compactors, port: Number(process.argv[2]) });
process.stdout.write(`listening ${service.port}\n`);

// A model call aborted by its caller is said on stdout, naming the user message it answered:
// the host tests read it to see that a cancelled turn aborted its model request.
const reported = new Set<unknown>();
setInterval(() => {
  for (const call of models.default.calls) {
    if (!call.aborted || reported.has(call)) continue;
    reported.add(call);
    const user = call.messages.filter((message) => message.role === 'user').at(-1);
    const text = user && Array.isArray(user.content) ? user.content.map((part) => ('text' in part ? part.text : '')).join('') : '';
    process.stdout.write(`model call aborted: ${text}\n`);
  }
}, 50).unref();
