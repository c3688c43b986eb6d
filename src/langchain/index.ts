/**
 * `artifact-store-sdk/langchain`: LangChain.js and LangGraph.js over any ArtifactStore; see
 * docs/langchain.md.
 *
 * - withArtifacts: tools whose results go through the transformer and the guardrail, answering with
 *   `content_and_artifact` (the short result for the model, the ArtifactRef as the ToolMessage's artifact).
 * - artifactTools: the read-back tools (artifact_read, _search, _query, _list, _info, _url) as LangChain tools.
 * - withArtifactCheckpoints / artifactSerializer: a LangGraph checkpointer whose saved state holds refs
 *   instead of bytes.
 *
 * `@langchain/core` (the tools) is loaded at run time; `@langchain/langgraph-checkpoint` only as
 * types, so an app with LangChain.js and no LangGraph can use this entry. Both are optional peers.
 */
export { withArtifacts, type ToolArtifact, type WithArtifactsOptions } from './tools.js';
export { artifactTools } from './read-back.js';
export { artifactSerializer, withArtifactCheckpoints, type ArtifactCheckpointOptions } from './checkpoint.js';
