/**
 * What the tool wrapper and the middleware share: `artifact://` references, and which tool calls a
 * model made through the middleware (whose prompts it resolves, so their tool results may hold refs).
 */
import type { ArtifactStore } from '../client/artifact-store.js';
import { encodeBase64 } from '../core/base64.js';

export const ARTIFACT_URI_PREFIX = 'artifact://';

/** The artifact id of an `artifact://{id}` URI, or undefined for any other string. */
export function artifactIdOf(uri: string): string | undefined {
  if (!uri.startsWith(ARTIFACT_URI_PREFIX)) return undefined;
  const id = uri.slice(ARTIFACT_URI_PREFIX.length);
  return id.length > 0 && !/[/?#\s]/.test(id) ? id : undefined;
}

/** The image types model APIs take as image content. */
export const MODEL_IMAGE_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

/** The bytes of a stored artifact, base64-encoded for a prompt; an Error that names it when it is gone. */
export async function storedBase64(store: ArtifactStore, id: string): Promise<string> {
  const bytes = await store.get(id);
  if (!bytes) throw gone(id);
  return encodeBase64(bytes);
}

/** The Error for a ref whose artifact is gone, saying what to do. */
export const gone = (id: string): Error =>
  new Error(
    `Artifact ${id} is referenced in the conversation but the store no longer has it (deleted or expired): ` +
      'drop the message that holds it, or keep such artifacts longer (the ttl option of the store or the transformer).',
  );

/**
 * Tool call ids a model issued through artifactMiddleware in this process (the newest 10,000). Their
 * results may hold `artifact://` refs for images, since the middleware resolves them before each
 * model call; any other call's result carries the bytes, as no middleware would resolve a ref.
 */
const viaMiddleware = new Set<string>();
const REMEMBERED = 10_000;

export function noteToolCall(toolCallId: string): void {
  viaMiddleware.add(toolCallId);
  if (viaMiddleware.size > REMEMBERED) viaMiddleware.delete(viaMiddleware.values().next().value as string);
}

export const resolvedByMiddleware = (toolCallId: string): boolean => viaMiddleware.has(toolCallId);
