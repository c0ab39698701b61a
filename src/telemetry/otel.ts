/**
 * The one door to OpenTelemetry: `@opentelemetry/api` is an optional peer dependency, loaded the
 * first time a tracer or meter provider is found registered, and never before. Without one (or
 * without the package) `tracing()` and `metering()` are false, each a property read on the global
 * the API registers its providers in, so the runtime's hot path pays one cheap check and nothing
 * else.
 *
 * The API keeps its registered providers on `globalThis` under a key of its major version: the
 * copy loaded here and the copy a user's program imports share them, whichever module format
 * each was loaded as.
 */
import { createRequire } from 'node:module';
import type * as OtelApi from '@opentelemetry/api';
import { guardedTracer, telemetryFailed } from './guarded.js';

/** The global under which `@opentelemetry/api` 1.x registers its providers. */
const REGISTRY = Symbol.for('opentelemetry.js.api.1');

interface Registry {
  readonly trace?: unknown;
  readonly metrics?: unknown;
}

const registry = globalThis as { [REGISTRY]?: Registry };

/** Whether a tracer provider is registered: spans are made only then. */
export function tracing(): boolean {
  return registry[REGISTRY]?.trace !== undefined;
}

/** Whether a meter provider is registered: metrics are recorded only then. */
export function metering(): boolean {
  return registry[REGISTRY]?.metrics !== undefined;
}

/** Whether a tracer or a meter provider is registered: the one check the hot path makes. */
export function observing(): boolean {
  const registered = registry[REGISTRY];
  return registered !== undefined && (registered.trace !== undefined || registered.metrics !== undefined);
}

/** The API module: undefined until first needed, null when it is not installed. */
let loaded: typeof OtelApi | null | undefined;

/**
 * The `@opentelemetry/api` module, or undefined when it is not installed (a provider registered
 * through another copy of the API is then out of reach, and nothing is recorded).
 */
export function otel(): typeof OtelApi | undefined {
  if (loaded === undefined) {
    try {
      loaded = createRequire(import.meta.url)('@opentelemetry/api') as typeof OtelApi;
    } catch {
      loaded = null;
    }
  }
  return loaded ?? undefined;
}

/** The name skillstate's tracer and meter are got under (the instrumentation scope). */
export const INSTRUMENTATION_SCOPE = 'skillstate';

/**
 * skillstate's tracer, or undefined when no tracer provider is registered. A tracer or span of
 * the registered provider that throws loses its span, never the work (see `./guarded.ts`).
 */
export function tracer(): OtelApi.Tracer | undefined {
  if (!tracing()) return undefined;
  const api = otel();
  if (!api) return undefined;
  try {
    return guardedTracer(api, api.trace.getTracer(INSTRUMENTATION_SCOPE));
  } catch (error) {
    telemetryFailed(error);
    return undefined;
  }
}

/** Runs `work` inside `span` (what it starts, spans and steps, nests under it), or as is without one. */
export function within<T>(span: { within<R>(work: () => R): R } | undefined, work: () => T): T {
  return span ? span.within(work) : work();
}
