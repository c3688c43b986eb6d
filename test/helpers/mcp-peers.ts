/**
 * Real MCP peers for the wrapMcpClient tests: the reference servers (server-everything,
 * server-filesystem) spawned over stdio, an in-process server over the SDK's in-memory transport,
 * and a recorder for the raw results the wrapped client transformed.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { createFsBlobStore } from '../../src/blob/fs.js';
import type { ArtifactStore } from '../../src/client/artifact-store.js';
import { createEmbeddedArtifactStore } from '../../src/service/embedded-store.js';
import type { ArtifactScope } from '../../src/core/schemas.js';
import { createSqliteRepository } from '../../src/db/sqlite.js';
import { createArtifactService } from '../../src/service/artifact-service.js';

const require = createRequire(import.meta.url);

export type PeerPackage = 'server-everything' | 'server-filesystem';

/** `dist/index.js` of an installed reference server (the packages have no main or exports). */
export function peerEntry(pkg: PeerPackage): string {
  return join(dirname(require.resolve(`@modelcontextprotocol/${pkg}/package.json`)), 'dist', 'index.js');
}

/** A stdio transport running the server with this Node, its stderr kept for failure messages. */
export function stdioPeer(pkg: PeerPackage, args: string[]): { transport: StdioClientTransport; stderr: () => string } {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [peerEntry(pkg), ...args],
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return { transport, stderr: () => stderr };
}

/** A client that declares no capabilities (no roots: server-filesystem would swap its directories for them). */
export const plainClient = () => new Client({ name: 'mcp-peers-test', version: '1.0.0' });

/** Connects, with the server's stderr in the error when it does not come up. */
export async function connectOrExplain(client: Client, transport: Transport, stderr: () => string): Promise<void> {
  try {
    await client.connect(transport);
  } catch (err) {
    throw new Error(`MCP server did not start: ${(err as Error).message}\nstderr:\n${stderr()}`, { cause: err });
  }
}

export interface RawCall {
  name: string;
  /** The result object as the SDK returned it (the one the transformer was given). */
  result: unknown;
  /** A deep copy taken on arrival, to prove the transformer left the caller's object alone. */
  snapshot: unknown;
}

/**
 * Records what the server really answered. wrapMcpClient calls the underlying client's own
 * `callTool`, so an instance-level replacement sees each raw result before it is transformed:
 * tools whose output changes per call (timestamps) can then be compared byte for byte.
 */
export function recordRawResults(client: Client): RawCall[] {
  const calls: RawCall[] = [];
  const original = client.callTool.bind(client);
  client.callTool = (async (...args: Parameters<Client['callTool']>) => {
    const result = await original(...args);
    calls.push({ name: args[0].name, result, snapshot: structuredClone(result) });
    return result;
  }) as Client['callTool'];
  return calls;
}

/** An embedded store (SQLite repository + fs blob store) in a fresh temp dir. */
export async function embeddedStore(
  scope: ArtifactScope,
): Promise<{ store: ArtifactStore; dir: string; close: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'mcp-peers-store-'));
  const repo = createSqliteRepository({ path: join(dir, 'artifacts.db') });
  const blobs = createFsBlobStore({ root: join(dir, 'blobs'), fsync: false });
  const service = createArtifactService({
    repo,
    blobs,
    limits: { maxArtifactBytes: 1 << 26, defaultTtlSeconds: 3600, maxTtlSeconds: 7200, touchFlushMs: 0 },
  });
  const store = createEmbeddedArtifactStore({ service, scope });
  return {
    store,
    dir,
    close: async () => {
      await service.close();
      await repo.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The same store, counting the writes made through it (content addressing hides a repeated put). */
export function countingStore(store: ArtifactStore): {
  store: ArtifactStore;
  puts: () => number;
  byMethod: Record<'putBytes' | 'putText' | 'putBase64' | 'putStream', number>;
} {
  const byMethod = { putBytes: 0, putText: 0, putBase64: 0, putStream: 0 };
  const counted =
    <A extends unknown[], R>(method: keyof typeof byMethod, fn: (...args: A) => Promise<R>) =>
    (...args: A) => {
      byMethod[method]++;
      return fn(...args);
    };
  const wrapped: ArtifactStore = {
    ...store,
    capabilities: store.capabilities,
    putBytes: counted('putBytes', store.putBytes.bind(store)),
    putText: counted('putText', store.putText.bind(store)),
    putBase64: counted('putBase64', store.putBase64.bind(store)),
    putStream: counted('putStream', store.putStream.bind(store)),
  };
  return { store: wrapped, byMethod, puts: () => Object.values(byMethod).reduce((a, b) => a + b, 0) };
}

export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
export const fromBase64 = (b64: string) => Buffer.from(b64, 'base64');
/** How big the observation is when serialized for the model. */
export const jsonChars = (v: unknown) => JSON.stringify(v).length;
