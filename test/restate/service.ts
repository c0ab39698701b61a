/**
 * A service process serving the test agents on the Restate host: `node --import tsx service.ts
 * <port>`. Prints `listening <port>` once it accepts connections.
 *
 * With SKILLSTATE_TEST_HOLD_CLOSE set, it serves on an HTTP/2 server of its own where, while the
 * file that variable names exists, the end of a turn object's attempt is seen late: the close of
 * the attempt's request, on which Restate's SDK aborts what the attempt left under way, reaches
 * the SDK once the file is gone. So a test sees a turn whose stream Restate is slow to close.
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:http2';
import * as restate from '@restatedev/restate-sdk';
import { restateAgents, serveRestateAgents } from '../../src/restate/index.js';
import { compactors, definitions, models, resolvers, skills } from './agents.js';

const port = Number(process.argv[2]);
const holdClose = process.env.SKILLSTATE_TEST_HOLD_CLOSE;
if (holdClose === undefined) {
  const service = await serveRestateAgents({ definitions, skills, resolvers, models, compactors, port });
  process.stdout.write(`listening ${service.port}\n`);
} else {
  const released = async () => {
    while (existsSync(holdClose)) await new Promise((resolve) => setTimeout(resolve, 50));
  };
  let endpoint = restate.endpoint();
  for (const service of restateAgents({ definitions, skills, resolvers, models, compactors })) endpoint = endpoint.bind(service);
  const handler = endpoint.http2Handler();
  const server = createServer((request, response) => {
    if (request.url.startsWith('/invoke/skillstate_turns/')) {
      const once = request.once.bind(request);
      request.once = ((event: string, listener: (...args: unknown[]) => void) =>
        event === 'close' ? once('close', (...args: unknown[]) => void released().then(() => listener(...args))) : once(event, listener)) as typeof request.once;
    }
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  process.stdout.write(`listening ${port}\n`);
}

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
