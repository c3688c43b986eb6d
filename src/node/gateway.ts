/**
 * The gateway's Node parts: the config file, and the transports to its upstreams (stdio servers
 * spawned as child processes, Streamable HTTP and SSE servers reached with fetch).
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { isStdioEntry, parseGatewayConfig, type GatewayConfig, type UpstreamEntry } from '../mcp/gateway/config.js';
import type { UpstreamConnection } from '../mcp/gateway/upstream.js';

/** Reads and checks a gateway config file; errors name the file, the key and the reason. */
export function loadGatewayConfig(
  path: string,
  env: Record<string, string | undefined> = process.env,
): GatewayConfig & { dir: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new TypeError(`Gateway config ${path} cannot be read: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new TypeError(`Gateway config ${path} is not valid JSON: ${(err as Error).message}`);
  }
  const config = parseGatewayConfig(json, env, `gateway (${path})`);
  return { ...config, dir: dirname(resolve(path)) };
}

const STDERR_TAIL_CHARS = 2000;

/**
 * Opens one upstream. A stdio server is spawned with the default environment plus its `env`, in
 * its `cwd` (relative to the config file's folder); its stderr goes to `log`, and the last of it
 * explains a failure.
 */
export function nodeUpstreamConnector(options: { baseDir?: string; log?: (line: string) => void } = {}) {
  return (name: string, entry: UpstreamEntry): UpstreamConnection => {
    if (isStdioEntry(entry)) {
      const transport = new StdioClientTransport({
        command: entry.command,
        args: entry.args,
        env: { ...getDefaultEnvironment(), ...entry.env },
        ...(entry.cwd || options.baseDir ? { cwd: resolve(options.baseDir ?? '.', entry.cwd ?? '.') } : {}),
        stderr: 'pipe',
      });
      let tail = '';
      transport.stderr?.on('data', (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        tail = (tail + text).slice(-STDERR_TAIL_CHARS);
        for (const line of text.split('\n')) if (line.trim()) options.log?.(`${name}: ${line.trimEnd()}`);
      });
      return { transport, diagnostics: () => lastLines(tail) };
    }
    const url = new URL(entry.url);
    const requestInit = { headers: entry.headers };
    const transport =
      entry.type === 'sse'
        ? new SSEClientTransport(url, { requestInit, eventSourceInit: { fetch: withHeaders(entry.headers) } })
        : new StreamableHTTPClientTransport(url, { requestInit });
    return { transport };
  };
}

function withHeaders(headers: Record<string, string>): typeof fetch {
  return (input, init) => {
    const merged = new Headers(init?.headers);
    for (const [k, v] of Object.entries(headers)) merged.set(k, v);
    return fetch(input, { ...init, headers: merged });
  };
}

/** The last few lines a process wrote, as one line. */
function lastLines(text: string): string {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-3)
    .join(' | ');
}
