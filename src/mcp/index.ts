/**
 * The MCP layer: raw tool results in, what the model should see out. Works with any ArtifactStore.
 *
 * - transformToolResult: the layered transformer (custom transform → per-tool fields → resource links
 *   → typed blocks → heuristic → size net; see transform/index.ts).
 * - clampObservation: the last-line guardrail for any tool's observation.
 * - wrapMcpClient: an SDK Client whose callTool results come back transformed.
 * - ResourceBridge: list, read (into the store), cache and subscribe to any server's resources.
 * - toContent / artifactLink: helpers for MCP servers.
 * - createArtifactMcpServer: stored artifacts as MCP resources (artifact://{id}) and tools.
 */
export { transformToolResult, artifactUri, type TransformResult, type TransformStats } from './transform/index.js';
export {
  ImagePolicySchema,
  resolveTransformConfig,
  TransformConfigSchema,
  type BlockSpec,
  type ImagePolicyConfig,
  type ToolImages,
  type CustomTransformContext,
  type CustomTransformer,
  type FieldSpec,
  type Layer,
  type ToolSpec,
  type TransformConfig,
  type TransformConfigInput,
  type TransformEvent,
  type TransformOptions,
} from './config.js';
export {
  clampObservation,
  GuardrailConfigSchema,
  type ClampOptions,
  type ClampResult,
  type GuardrailConfig,
  type GuardrailConfigInput,
  type ObservationClampedEvent,
} from './guardrail.js';
export { wrapMcpClient, type WrapMcpClientOptions } from './wrap-client.js';
export {
  ResourceBridge,
  ResourceBridgeConfigSchema,
  ResourceBridgeError,
  ResourceCache,
  type PlannerTool,
  type ResourceBridgeConfig,
  type ResourceBridgeConfigInput,
  type ResourceBridgeEvent,
  type ResourceBridgeOptions,
  type ResourceErrorCode,
  type ResourceRead,
} from './resources.js';
export {
  createArtifactMcpServer,
  RESOURCE_NOT_FOUND,
  type ArtifactMcpServer,
  type ArtifactMcpServerOptions,
} from './server.js';
export {
  ARTIFACT_TOOLS,
  artifactToolDefinitions,
  artifactTools,
  callArtifactTool,
  type ArtifactTool,
  type ArtifactToolDefinition,
  type ArtifactToolOptions,
} from './artifact-tools.js';
export { toContent, artifactLink, type BinaryContent, type ContentInput, type ToContentOptions } from './content.js';
export { PRESETS, type PresetName } from './presets.js';
