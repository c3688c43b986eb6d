import { z } from 'zod';
import type { ArtifactStore } from '../client/artifact-store.js';
import { isNoOpArtifactStore, isUnstoredRef } from '../client/noop-store.js';
import { formatBytes } from '../core/bytes.js';
import type { ArtifactRef, ArtifactScope } from '../core/schemas.js';
import { count, maxDepthSchema, parseConfig } from './config.js';
import { BinaryValue, toJsonSafe, type JsonValue, type WorkValue } from './json.js';
import { isPlainObject } from './paths.js';
import { countLines, formatCount, modelRef, viewClause } from './summary.js';
import { hideBase64Deep } from './transform/index.js';
import { measureChars, truncateToFit } from './truncate.js';

export const GuardrailConfigSchema = z.strictObject({
  /** The whole observation's budget, in characters of JSON (a string observation: its length). */
  maxObservationChars: count.min(64).default(50_000),
  /** Strings longer than this are cut first when truncating. */
  maxFieldChars: count.min(16).default(10_000),
  /** Over budget and larger than this, with a real store: the whole observation becomes an artifact. */
  autoArtifactThreshold: count.default(20_000),
  /** Size of the structure-preserving preview that stands beside a stored observation. */
  previewChars: count.min(16).default(2_000),
  /** A token budget too, measured with `countTokens` (both budgets must hold). */
  maxObservationTokens: count.min(1).optional(),
  maxDepth: maxDepthSchema,
  /** The view tools (artifact_read, artifact_search, artifact_query) are there: a stored observation's summary names them. */
  viewTools: z.boolean().default(false),
});
export type GuardrailConfigInput = z.input<typeof GuardrailConfigSchema>;
export type GuardrailConfig = z.output<typeof GuardrailConfigSchema>;

export interface ObservationClampedEvent {
  type: 'observation.clamped';
  originalSize: number;
  finalSize: number;
  /** How the observation was brought within budget. */
  mode: 'artifact' | 'truncated';
  ref?: ArtifactRef;
  tool?: string;
}

export interface ClampOptions {
  /** A real store keeps the whole observation; none (or a NoOp store) means structure-preserving truncation. */
  store?: ArtifactStore;
  config?: GuardrailConfigInput;
  /** Counts tokens of a text, for token budgets (`maxObservationTokens`). */
  countTokens?: (text: string) => number;
  onEvent?: (event: ObservationClampedEvent) => void;
  /** Names the tool in summaries, events and the artifact's namespace source. */
  tool?: string;
  scope?: Partial<ArtifactScope>;
  /** Namespace of a stored observation; default `observation`. */
  namespace?: string;
}

export interface ClampResult<T = unknown> {
  observation: T;
  clamped: boolean;
  /** Characters (JSON) before and after. */
  originalSize: number;
  finalSize: number;
  /** The stored whole observation, when one was stored. */
  artifact?: ArtifactRef;
}

/**
 * The last line of defence for any tool's observation, MCP or native. Within budget: returned as is
 * (made JSON-safe). Over budget: with a real store and above autoArtifactThreshold, the whole
 * observation is stored and the model gets ref + summary + a structure-preserving preview; otherwise
 * it is truncated keeping its structure (keys kept, long strings cut with `… [truncated: N chars]`,
 * long arrays cut with a count). The result always fits the budget. Emits `observation.clamped`.
 *
 * @example
 * const { observation, clamped } = await clampObservation(toolOutput, { store, tool: 'search' });
 */
export async function clampObservation<T = unknown>(
  observation: unknown,
  options: ClampOptions = {},
): Promise<ClampResult<T>> {
  const config = parseConfig(GuardrailConfigSchema, options.config ?? {}, 'guardrail');
  const { value } = toJsonSafe(observation, config.maxDepth);
  const store = options.store && !isNoOpArtifactStore(options.store) ? options.store : undefined;
  const safe = await settleBytes(value, store, options);

  const fits = (v: JsonValue): boolean => {
    if (measureChars(v, config.maxObservationChars) > config.maxObservationChars) return false;
    if (config.maxObservationTokens === undefined || !options.countTokens) return true;
    return options.countTokens(typeof v === 'string' ? v : JSON.stringify(v)) <= config.maxObservationTokens;
  };
  const originalSize = measureChars(safe);
  if (fits(safe)) return { observation: safe as T, clamped: false, originalSize, finalSize: originalSize };

  let result: JsonValue;
  let artifact: ArtifactRef | undefined;
  if (store && originalSize > config.autoArtifactThreshold) {
    const text = typeof safe === 'string' ? safe : JSON.stringify(safe);
    artifact = await store.putText(text, {
      mimeType: typeof safe === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
      namespace: options.namespace ?? 'observation',
      filename: `${options.tool ?? 'observation'}.${typeof safe === 'string' ? 'txt' : 'json'}`,
      source: { ...(options.tool ? { tool: options.tool } : {}), clamped: true },
      ...(options.scope ? { scope: options.scope } : {}),
    });
    const unstored = isUnstoredRef(artifact);
    const views =
      config.viewTools && !unstored
        ? viewClause(artifact.mimeType, typeof safe === 'string' ? countLines(safe) : undefined)
        : undefined;
    const summary =
      `The ${options.tool ? `${options.tool} ` : ''}output (${formatCount(originalSize)} chars, ${formatBytes(artifact.sizeBytes)}) was over the ` +
      `${formatCount(config.maxObservationChars)}-char budget, so it was stored whole as artifact ${artifact.id}. The preview keeps its structure` +
      (views ? `; ${views}.` : '.') +
      (unstored ? ' Not stored: the store keeps nothing.' : '');
    // Strings in the preview are cut to 200 characters or fewer; base64 in those is shown as a placeholder.
    const fieldChars = Math.min(config.maxFieldChars, 200);
    const preview = truncateToFit(
      hideBase64Deep(safe, fieldChars, unstored ? undefined : `in artifact ${artifact.id}`),
      (v) => measureChars(v, config.previewChars) <= config.previewChars,
      { fieldChars, arrayItems: 5 },
    );
    result = truncateToFit({ artifact: modelRef(artifact) as JsonValue, summary, preview }, fits, {
      fieldChars: config.maxFieldChars,
    });
  } else {
    // Truncated for the model, whose copy holds no base64: what was cut off could not be decoded anyway.
    result = truncateToFit(hideBase64Deep(safe, config.maxFieldChars), fits, { fieldChars: config.maxFieldChars });
  }
  const finalSize = measureChars(result);
  options.onEvent?.({
    type: 'observation.clamped',
    originalSize,
    finalSize,
    mode: artifact ? 'artifact' : 'truncated',
    ...(artifact ? { ref: artifact } : {}),
    ...(options.tool ? { tool: options.tool } : {}),
  });
  return { observation: result as T, clamped: true, originalSize, finalSize, ...(artifact ? { artifact } : {}) };
}

/** Raw bytes in an observation: stored when there is a store, else a marker that says how many. */
async function settleBytes(
  value: WorkValue,
  store: ArtifactStore | undefined,
  options: ClampOptions,
): Promise<JsonValue> {
  const settle = async (v: WorkValue): Promise<JsonValue> => {
    if (v instanceof BinaryValue) {
      if (!store) return `[binary data: ${v.bytes.byteLength} bytes, not shown]`;
      const ref = await store.putBytes(v.bytes, {
        namespace: options.namespace ?? 'observation',
        ...(options.scope ? { scope: options.scope } : {}),
      });
      return {
        artifact: modelRef(ref) as JsonValue,
        summary: `Binary data (${formatBytes(ref.sizeBytes)}) stored as artifact ${ref.id}.`,
      };
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) if (hasBytes(v[i]!)) v[i] = (await settle(v[i]!)) as WorkValue;
      return v as JsonValue;
    }
    if (isPlainObject(v)) {
      for (const k of Object.keys(v)) if (hasBytes(v[k]!)) v[k] = (await settle(v[k]!)) as WorkValue;
    }
    return v as JsonValue;
  };
  return hasBytes(value) ? settle(value) : (value as JsonValue);
}

function hasBytes(v: WorkValue): boolean {
  if (v instanceof BinaryValue) return true;
  if (Array.isArray(v)) return v.some(hasBytes);
  if (isPlainObject(v)) return Object.values(v).some(hasBytes);
  return false;
}
