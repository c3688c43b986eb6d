/**
 * The custom transform layer: the `transform` option, the escape hatch. It sees the raw result first;
 * a value it returns replaces the whole result, and the other layers do not run (only raw bytes left
 * in that value are stored). Puts through the store it is given count as this call's artifacts.
 */
import type { ArtifactStore } from '../../client/artifact-store.js';
import type { ArtifactRef } from '../../core/schemas.js';
import type { CustomTransformContext } from '../config.js';
import type { TransformRun } from './run.js';

/** What the custom transformer returned, or undefined when there is none or it let the layers run. */
export async function runCustomTransform(run: TransformRun, input: unknown): Promise<unknown> {
  return run.options.transform ? run.options.transform(run.toolName, input, customContext(run)) : undefined;
}

function customContext(run: TransformRun): CustomTransformContext {
  const record = async (ref: Promise<ArtifactRef>): Promise<ArtifactRef> => run.record(await ref, 'custom');
  const store = run.store;
  const tracked: ArtifactStore = {
    ...store,
    capabilities: store.capabilities,
    putBytes: (data, o) => record(store.putBytes(data, run.putOptions(o))),
    putText: (text, o) => record(store.putText(text, run.putOptions(o))),
    putBase64: (data, o) => record(store.putBase64(data, run.putOptions(o))),
    putStream: (stream, o) => record(store.putStream(stream, run.putOptions(o))),
  };
  return {
    toolName: run.toolName,
    namespace: run.namespace,
    store: tracked,
    ...(run.options.scope ? { scope: run.options.scope } : {}),
  };
}
