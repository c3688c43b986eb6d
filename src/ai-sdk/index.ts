/**
 * `artifact-store-sdk/ai-sdk`: the Vercel AI SDK (`ai` 6 and 7) over any ArtifactStore; see docs/ai-sdk.md.
 *
 * - withArtifacts: a tool set (native tools, or the AI SDK's MCP client's) whose results are
 *   transformed: bytes and oversized payloads stored, the output holding refs and summaries.
 * - artifactTools: the read-back tools (artifact_read, artifact_search, …) as AI SDK tools.
 * - artifactMiddleware: a language-model middleware that gives the model bytes only where it needs
 *   them, at each call, so the messages the app saves hold refs.
 *
 * Only types come from `ai` and `@ai-sdk/provider` (optional peers), so this entry point loads neither.
 */
export { artifactMiddleware, type ArtifactMiddlewareOptions } from './middleware.js';
export { artifactTools } from './read-tools.js';
export { type WithArtifacts, withArtifacts, type WithArtifactsOptions } from './tools.js';
