/**
 * The Restate SDK (`@restatedev/restate-sdk`) as the host uses it: an optional peer dependency of
 * skillstate, loaded as `skillstate/restate` is imported. Without it, that import fails with a
 * typed error (`invalid_options`, `details.reason: 'peer_missing'`) that says what to install and
 * which Node the SDK needs, rather than Node's bare ERR_MODULE_NOT_FOUND. The host's modules
 * import the SDK from here (`import * as restate from './sdk.js'`), never from the package.
 */
import './polyfill.js';
import type * as Sdk from '@restatedev/restate-sdk';
import { errorInfo } from '../core/errors.js';
import { RuntimeError } from '../core/runtime-error.js';

const PACKAGE = '@restatedev/restate-sdk';

/** The SDK, or the error that says how to install it when it cannot be found. */
async function loadSdk(): Promise<typeof Sdk> {
  try {
    return await import('@restatedev/restate-sdk');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Only the package itself missing is said so; anything else (a broken install) is as Node says.
    if ((code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') || !String((error as Error).message).includes(`'${PACKAGE}'`)) throw error;
    const message = `skillstate/restate needs the Restate SDK, an optional peer dependency of skillstate that is not installed: run 'npm install ${PACKAGE}' in your application (the SDK needs Node 20.19 or later; this is Node ${process.versions.node})`;
    throw new RuntimeError(errorInfo('invalid_options', message, { subject: PACKAGE, details: { reason: 'peer_missing', package: PACKAGE } }));
  }
}

const sdk = await loadSdk();

export const { object, workflow, handlers, endpoint, serde, CancelledError, TimeoutError } = sdk;
export type { InvocationHandle, InvocationId, ObjectContext, ObjectSharedContext, Serde, VirtualObjectDefinition, WorkflowContext, WorkflowDefinition, WorkflowSharedContext } from '@restatedev/restate-sdk';
