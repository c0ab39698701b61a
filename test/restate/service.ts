/**
 * A service process serving the test agents on the Restate host: `node --import tsx service.ts
 * <port>`. Prints `listening <port>` once it accepts connections.
 */
import { serveRestateAgents } from '../../src/restate/index.js';
import { definitions, models, skills } from './agents.js';

const service = await serveRestateAgents({ definitions, skills, models, port: Number(process.argv[2]) });
process.stdout.write(`listening ${service.port}\n`);
