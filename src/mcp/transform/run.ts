/**
 * The state of one transformToolResult call, shared by every layer: the resolved config, where
 * artifacts go and under which namespace, what was stored so far, and the stats and warnings.
 */
import type { ArtifactStore } from '../../client/artifact-store.js';
import { createNoOpArtifactStore, isUnstoredRef } from '../../client/noop-store.js';
import { assertNamespace, namespaceFromToolName } from '../../core/ids.js';
import type { ArtifactRef, PutOptions } from '../../core/schemas.js';
import {
  resolveTransformConfig,
  type Layer,
  type ToolSpec,
  type TransformConfig,
  type TransformOptions,
} from '../config.js';
import type { WorkValue } from '../json.js';
import { imagePolicyFor, type ImagePolicy } from './images.js';
import type { Outcome } from './payloads.js';
import { toolSpecsFor } from './per-tool-fields.js';

export interface TransformStats {
  /** Characters of the result as JSON, before and after (strings over 64 Ki chars counted by length). */
  charsBefore: number;
  charsAfter: number;
  /** Distinct artifacts stored (or, with a NoOp store, described but not stored). */
  artifacts: number;
  bytesStored: number;
  /** Payloads found but not stored: too large, refused by the store, or corrupt. */
  notStored: number;
  byLayer: Record<Layer, number>;
  /** Things a host may want to log: cycles, depth limits, corrupt payloads, refusals. */
  warnings: string[];
}

let defaultNoOp: ArtifactStore | undefined;
const noOpStore = () => (defaultNoOp ??= createNoOpArtifactStore());

export class TransformRun {
  readonly config: TransformConfig;
  readonly namespace: string;
  readonly store: ArtifactStore;
  /** The per-tool specs (config.tools and presets) that apply to this tool on this server. */
  readonly specs: ToolSpec[];
  /** Every artifact stored so far, by id. */
  readonly artifacts = new Map<string, ArtifactRef>();
  /** One outcome per payload (by its string or its bytes), so a payload seen twice is stored once. */
  readonly memo = new Map<string | Uint8Array, Promise<Outcome>>();
  /** Replacements made so far: a JSON text block is re-serialized only when its document changed. */
  edits = 0;
  /** Which of this tool's image blocks stay inline for the model. */
  readonly images: ImagePolicy;
  /** Image blocks kept inline so far. */
  inlineImages = 0;
  readonly stats: TransformStats = {
    charsBefore: 0,
    charsAfter: 0,
    artifacts: 0,
    bytesStored: 0,
    notStored: 0,
    byLayer: { custom: 0, fields: 0, links: 0, blocks: 0, heuristic: 0, size: 0 },
    warnings: [],
  };

  constructor(
    readonly toolName: string,
    readonly options: TransformOptions,
  ) {
    this.config = resolveTransformConfig(options.config);
    this.namespace =
      options.namespace !== undefined
        ? assertNamespace(options.namespace)
        : namespaceFromToolName(toolName, options.serverName);
    this.store = options.store ?? noOpStore();
    this.specs = toolSpecsFor(toolName, options.serverName, this.config);
    this.images = imagePolicyFor(this.config, this.specs);
  }

  /** The options of a put: this run's namespace, source, scope and TTL, unless `o` says otherwise. */
  putOptions(o: PutOptions = {}): PutOptions {
    const out: PutOptions = {
      namespace: this.namespace,
      source: { tool: this.toolName, ...(this.options.serverName ? { server: this.options.serverName } : {}) },
      ...o,
    };
    if (this.options.scope && !o.scope) out.scope = this.options.scope;
    if (this.config.ttlSeconds !== undefined && o.ttl === undefined) out.ttl = this.config.ttlSeconds;
    return out;
  }

  /** Notes a stored ref: counted once per artifact, with an artifact.stored event the first time. */
  record(ref: ArtifactRef, layer: Layer): ArtifactRef {
    if (!this.artifacts.has(ref.id)) {
      this.artifacts.set(ref.id, ref);
      this.stats.byLayer[layer]++;
      if (!isUnstoredRef(ref)) this.stats.bytesStored += ref.sizeBytes;
      this.options.onEvent?.({ type: 'artifact.stored', ref, tool: this.toolName, layer });
    } else {
      // The same bytes reached two layers as different strings (a text block and an image block of one
      // SVG): one artifact, and the store now describes it as the later put did. `artifacts` follows it.
      this.artifacts.set(ref.id, ref);
    }
    return ref;
  }

  /** Puts `value` at parent[key], counting the edit. */
  replace(parent: Record<string, WorkValue> | WorkValue[], key: string | number, value: WorkValue): void {
    (parent as Record<string | number, WorkValue>)[key] = value;
    this.edits++;
  }

  warn(message: string): void {
    if (!this.stats.warnings.includes(message)) this.stats.warnings.push(message);
  }
}
