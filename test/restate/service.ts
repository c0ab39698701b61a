/**
 * A service process serving the test agents on the Restate host: `node --import tsx service.ts
 * <port>`. Prints `listening <port>` once it accepts connections.
 */
import { serveRestateAgents } from '../../src/restate/index.js';
import { compactors, definitions, models, resolvers, skills } from './agents.js';

const service = await serveRestateAgents({ definitions, skills, resolvers, models, compactors, port: Number(process.argv[2]) });
process.stdout.write(`listening ${service.port}\n`);

// Each model call is said on stdout when it is made, and again if its caller aborts it, naming the
// user message it answers (a summary of the history, the history it summarises, on one line): the
// host tests read it to see that a turn reached its model call, and that a cancelled turn aborted it.
const started = new Set<unknown>();
const reported = new Set<unknown>();
setInterval(() => {
  for (const call of models.default.calls) {
    const user = call.messages.filter((message) => message.role === 'user').at(-1);
    const text = user && Array.isArray(user.content) ? user.content.map((part) => ('text' in part ? part.text : '')).join('').replaceAll('\n', ' ') : '';
    const kind = call.system.startsWith('Summarise this conversation') ? 'summary call' : 'model call';
    if (!started.has(call)) {
      started.add(call);
      process.stdout.write(`${kind} ${call.messages.filter((message) => message.role === 'tool').length > 0 ? 'after a tool' : 'made'}: ${text}\n`);
    }
    if (!call.aborted || reported.has(call)) continue;
    reported.add(call);
    process.stdout.write(`${kind} aborted: ${text}\n`);
  }
}, 50).unref();
