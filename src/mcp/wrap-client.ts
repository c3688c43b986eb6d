/** wrapMcpClient: an MCP SDK Client whose callTool results come back through transformToolResult. */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ArtifactRef } from '../core/schemas.js';
import type { TransformOptions } from './config.js';
import type { ResourceBridge } from './resources.js';
import { transformToolResult, type TransformStats } from './transform/index.js';

export interface WrapMcpClientOptions extends Omit<TransformOptions, 'readResource'> {
  /**
   * Namespace prefix for this server's tools (`tableau` → `tableau.download_workbook`). Default: the
   * name the server reported at initialize.
   */
  serverName?: string;
  /**
   * Reads resource_links for the auto-read policy (`config.autoReadIfSizeUnderBytes`) through this
   * bridge: its timeout and typed errors. Without one, the client's own readResource is used when the
   * server offers resources.
   */
  resources?: ResourceBridge;
  /** Called after every transformed call: what was stored and how much smaller the result got. */
  onTransform?: (info: { tool: string; artifacts: ArtifactRef[]; stats: TransformStats }) => void;
}

/**
 * The same Client, except that `callTool` results come back transformed: binary and oversized
 * payloads stored in `options.store`, the model's copy holding refs and summaries. Everything else
 * (listTools, readResource, notifications, close) is the client's own. The auto-read policy for
 * resource_links uses the client's `readResource` when the server offers resources.
 *
 * @example
 * const client = wrapMcpClient(new Client({ name: 'host', version: '1.0.0' }), { store, serverName: 'tableau' });
 * await client.connect(transport);
 * const result = await client.callTool({ name: 'download_workbook', arguments: { workbookId } });
 */
export function wrapMcpClient<C extends Client>(client: C, options: WrapMcpClientOptions = {}): C {
  const { onTransform, resources, ...transformOptions } = options;
  const callTool: Client['callTool'] = async (params, resultSchema, requestOptions) => {
    const raw = await client.callTool(params, resultSchema, requestOptions);
    const serverName = options.serverName ?? client.getServerVersion()?.name;
    const canRead = client.getServerCapabilities()?.resources !== undefined;
    const { result, artifacts, stats } = await transformToolResult<typeof raw>(params.name, raw, {
      ...transformOptions,
      ...(serverName ? { serverName } : {}),
      ...(resources
        ? { readResource: (uri: string) => resources.fetch(uri) }
        : canRead
          ? { readResource: (uri: string) => client.readResource({ uri }, requestOptions) }
          : {}),
    });
    onTransform?.({ tool: params.name, artifacts, stats });
    return result;
  };
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === 'callTool') return callTool;
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
