/**
 * artifactMiddleware: a language-model middleware (`wrapLanguageModel`) that keeps bytes out of what
 * the app saves and puts back only what the model needs, at each call:
 *
 * - `artifact://{id}` refs in the prompt (images of wrapped tools, file parts the app saved as refs)
 *   become the bytes again for the types the model takes (`modelTypes`), a one-line ref for others;
 * - file parts and tool-result media that still carry bytes are stored once (by content) and reach
 *   the model as bytes where it takes their type, else as that one-line ref;
 * - tool results from unwrapped tools go through the transformer, and text parts over the guardrail's
 *   budget through the guardrail, so no base64 run or oversized text reaches the model.
 *
 * It also tells the AI SDK that the model "supports" `artifact://` URLs, so the SDK leaves them to it
 * instead of trying to download them.
 */
import type { LanguageModelMiddleware } from 'ai';
import type { ArtifactStore } from '../client/artifact-store.js';
import { decodeBase64, encodeBase64 } from '../core/base64.js';
import { formatBytes } from '../core/bytes.js';
import type { ArtifactRef, ArtifactScope } from '../core/schemas.js';
import type { TransformConfigInput } from '../mcp/config.js';
import { clampObservation, type GuardrailConfigInput } from '../mcp/guardrail.js';
import { transformToolResult } from '../mcp/transform/index.js';
import { ARTIFACT_URI_PREFIX, artifactIdOf, gone, MODEL_IMAGE_TYPES, noteToolCall } from './refs.js';

export interface ArtifactMiddlewareOptions {
  store: ArtifactStore;
  /**
   * The media types the model is given as bytes (a type, or a prefix ending in `/`). Default: the
   * image types every vision model takes (PNG, JPEG, GIF, WebP). Add `application/pdf` for a model
   * that reads PDFs; anything else reaches the model as a one-line ref it can read back with tools.
   */
  modelTypes?: readonly string[];
  /** The transformer's config, for tool results in the prompt that were not transformed yet. */
  config?: TransformConfigInput;
  /** The guardrail's budget for a text part or a tool result, in characters. */
  guardrail?: GuardrailConfigInput;
  /** The scope file parts are stored under. */
  scope?: Partial<ArtifactScope>;
}

type Part = Record<string, unknown> & { type: string };
type CallOptions = Parameters<NonNullable<LanguageModelMiddleware['transformParams']>>[0]['params'];
type Prompt = CallOptions['prompt'];
type StreamPart =
  Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapStream']>>>['stream'] extends ReadableStream<infer P>
    ? P
    : never;
type DataContent = Uint8Array | string | URL;

/**
 * What was stored or transformed, by content, so a prompt resent at every step is stored once: texts
 * (base64, JSON) by value, the newest 256 up to 64 Mi characters in all; byte arrays by identity.
 */
class Once {
  private readonly byText = new Map<string, Promise<unknown>>();
  private readonly byBytes = new WeakMap<Uint8Array, Promise<unknown>>();
  private chars = 0;

  get<T>(key: string | Uint8Array, compute: () => Promise<T>): Promise<T> {
    if (typeof key !== 'string') {
      const known = this.byBytes.get(key);
      if (known) return known as Promise<T>;
      const computed = compute();
      this.byBytes.set(key, computed);
      computed.catch(() => this.byBytes.delete(key));
      return computed;
    }
    const known = this.byText.get(key);
    if (known) {
      // The newest last: eviction takes the oldest.
      this.byText.delete(key);
      this.byText.set(key, known);
      return known as Promise<T>;
    }
    const computed = compute();
    computed.catch(() => this.forget(key));
    this.byText.set(key, computed);
    this.chars += key.length;
    while (this.byText.size > 256 || this.chars > 64 * 1024 * 1024) {
      this.forget(this.byText.keys().next().value as string);
    }
    return computed;
  }

  private forget(key: string): void {
    if (this.byText.delete(key)) this.chars -= key.length;
  }
}

/**
 * @example
 * const model = wrapLanguageModel({ model: openai('gpt-5'), middleware: artifactMiddleware({ store }) });
 */
export function artifactMiddleware(options: ArtifactMiddlewareOptions): LanguageModelMiddleware {
  if (!options?.store) {
    throw new TypeError('artifactMiddleware({ store }) needs a store: createHttpArtifactStore({ baseUrl, token }).');
  }
  const resolver = new PromptResolver(options);
  return {
    specificationVersion: 'v3',
    overrideSupportedUrls: async ({ model }) => {
      const own = await model.supportedUrls;
      return { ...own, '*/*': [...(own['*/*'] ?? []), /^artifact:\/\//] };
    },
    transformParams: async ({ params }) => ({ ...params, prompt: await resolver.prompt(params.prompt) }),
    wrapGenerate: async ({ doGenerate }) => {
      const result = await doGenerate();
      for (const part of result.content) if (part.type === 'tool-call') noteToolCall(part.toolCallId);
      return result;
    },
    wrapStream: async ({ doStream }) => {
      const { stream, ...rest } = await doStream();
      const noted = stream.pipeThrough(
        new TransformStream<StreamPart, StreamPart>({
          transform(part, controller) {
            if (part.type === 'tool-call') noteToolCall(part.toolCallId);
            controller.enqueue(part);
          },
        }),
      );
      return { stream: noted, ...rest };
    },
  };
}

class PromptResolver {
  private readonly once = new Once();
  private readonly modelTypes: readonly string[];

  constructor(private readonly options: ArtifactMiddlewareOptions) {
    this.modelTypes = options.modelTypes ?? MODEL_IMAGE_TYPES;
  }

  async prompt(prompt: Prompt): Promise<Prompt> {
    return Promise.all(
      prompt.map(async (message) => {
        if (message.role === 'system') return message;
        const parts = message.content as unknown as Part[];
        const content = await Promise.all(parts.map((part) => this.part(part)));
        return { ...message, content } as unknown as typeof message;
      }),
    );
  }

  private takes(mediaType: string): boolean {
    const type = mediaType.split(';')[0]!.trim().toLowerCase();
    return this.modelTypes.some((t) => (t.endsWith('/') ? type.startsWith(t) : type === t));
  }

  private async part(part: Part): Promise<Part> {
    switch (part.type) {
      case 'text':
        return typeof part.text === 'string' ? { ...part, text: await this.text(part.text) } : part;
      case 'file':
        return this.file(part);
      case 'tool-result':
        return { ...part, output: await this.toolOutput(String(part.toolName ?? 'tool'), part.output as Part) };
      default:
        return part;
    }
  }

  /** A text over the guardrail's budget is stored whole; the model gets a ref, a summary and a preview. */
  private async text(text: string): Promise<string> {
    const { maxObservationChars = 50_000 } = this.options.guardrail ?? {};
    if (text.length <= maxObservationChars) return text;
    return this.once.get(text, async () => {
      const { observation, clamped } = await clampObservation<unknown>(text, this.clampOptions('prompt'));
      return clamped ? JSON.stringify(observation) : text;
    });
  }

  private clampOptions(tool: string) {
    return {
      store: this.options.store,
      tool,
      ...(this.options.guardrail ? { config: this.options.guardrail } : {}),
      ...(this.options.scope ? { scope: this.options.scope } : {}),
    };
  }

  /** A file part: an `artifact://` ref resolved, bytes stored once; bytes for the model's types, else a ref. */
  private async file(part: Part): Promise<Part> {
    const mediaType = String(part.mediaType ?? 'application/octet-stream');
    const filename = typeof part.filename === 'string' ? part.filename : undefined;
    const data = part.data as DataContent;
    const uri = data instanceof URL ? data.href : typeof data === 'string' ? data : undefined;
    const id = uri !== undefined ? artifactIdOf(uri) : undefined;
    if (id !== undefined) {
      const ref = await this.refOf(id);
      if (!this.takes(ref.mimeType)) return { type: 'text', text: refLine(ref) };
      const { data: _ref, ...rest } = part;
      return { ...rest, mediaType: ref.mimeType.split(';')[0]!, data: await this.bytesOf(ref) };
    }
    if (data instanceof URL) return part; // a URL the model (or the SDK) fetches itself
    const ref = await this.storeBytes(data, mediaType, filename);
    return this.takes(mediaType) ? part : { type: 'text', text: refLine(ref) };
  }

  private async toolOutput(toolName: string, output: Part): Promise<Part> {
    if (output.type === 'content' && Array.isArray(output.value)) {
      const value = await Promise.all((output.value as Part[]).map((p) => this.toolContent(p)));
      return { ...output, value };
    }
    if (
      output.type === 'json' ||
      output.type === 'error-json' ||
      output.type === 'text' ||
      output.type === 'error-text'
    ) {
      return { ...output, value: await this.toolValue(toolName, output.value) };
    }
    return output;
  }

  private async toolContent(part: Part): Promise<Part> {
    if (part.type === 'image-url' || part.type === 'file-url') {
      const id = artifactIdOf(String(part.url));
      if (id === undefined) return part;
      const ref = await this.refOf(id);
      if (!this.takes(ref.mimeType)) return { type: 'text', text: refLine(ref) };
      const mediaType = ref.mimeType.split(';')[0]!;
      const data = encodeBase64(await this.bytesOf(ref));
      return part.type === 'image-url' && mediaType.startsWith('image/')
        ? { type: 'image-data', data, mediaType }
        : { type: 'file-data', data, mediaType, ...(ref.filename ? { filename: ref.filename } : {}) };
    }
    if (part.type === 'image-data' || part.type === 'file-data' || part.type === 'media') {
      const mediaType = String(part.mediaType ?? 'application/octet-stream');
      const ref = await this.storeBytes(String(part.data), mediaType, part.filename as string | undefined);
      return this.takes(mediaType) ? part : { type: 'text', text: refLine(ref) };
    }
    if (part.type === 'text' && typeof part.text === 'string') return { ...part, text: await this.text(part.text) };
    return part;
  }

  /** A tool result no wrapper transformed (older history, another tool set): transformed here, once. */
  private async toolValue(toolName: string, value: unknown): Promise<unknown> {
    const json = typeof value === 'string' ? value : JSON.stringify(value ?? null);
    const limit = 10_000;
    if (json.length <= limit && !hasBase64Run(json)) return value;
    const settled = await this.once.get(json, async () => {
      const { result } = await transformToolResult(toolName, value, {
        store: this.options.store,
        ...(this.options.config ? { config: this.options.config } : {}),
        ...(this.options.scope ? { scope: this.options.scope } : {}),
      });
      const { observation } = await clampObservation(result, this.clampOptions(toolName));
      return observation;
    });
    return typeof value === 'string' && typeof settled !== 'string' ? JSON.stringify(settled) : settled;
  }

  private async refOf(id: string): Promise<ArtifactRef> {
    const ref = await this.options.store.getRef(id);
    if (!ref) throw gone(id);
    return ref;
  }

  private async bytesOf(ref: ArtifactRef): Promise<Uint8Array> {
    const bytes = await this.options.store.get(ref.id);
    if (!bytes) throw gone(ref.id);
    return bytes;
  }

  private storeBytes(data: Uint8Array | string, mediaType: string, filename?: string): Promise<ArtifactRef> {
    return this.once.get(data, () => {
      const bytes = typeof data === 'string' ? decodeBase64(data).bytes : data;
      return this.options.store.putBytes(bytes, {
        mimeType: mediaType,
        namespace: 'prompt',
        ...(filename ? { filename } : {}),
        source: { via: 'ai-sdk' },
        ...(this.options.scope ? { scope: this.options.scope } : {}),
      });
    });
  }
}

/** A run of 256 base64 characters or more: bytes the model should not read as text. */
const hasBase64Run = (json: string): boolean => /[A-Za-z0-9+/]{256}/.test(json);

/** What the model reads instead of a file it does not take: the artifact's id, type, size and name. */
function refLine(ref: ArtifactRef): string {
  const name = ref.filename ? `${ref.filename}, ` : '';
  return `[file ${name}${ref.mimeType}, ${formatBytes(ref.sizeBytes)}: stored as ${ARTIFACT_URI_PREFIX}${ref.id}; read it with the artifact tools]`;
}
