/**
 * The gateway's Node parts: the config file, and the transports to its upstreams (stdio servers
 * spawned as child processes, Streamable HTTP and SSE servers reached with fetch).
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { deserializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
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
 * The largest message a stdio server may send. The SDK's default (10 MiB) refuses a result a little
 * over that and drops the connection; results this big are what the gateway is for.
 */
export const MAX_STDIO_MESSAGE_BYTES = 256 * 1024 * 1024;

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
        maxBufferSize: MAX_STDIO_MESSAGE_BYTES,
      });
      useLinearReadBuffer(transport);
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

/**
 * The SDK's stdio ReadBuffer joins every chunk onto what it holds (Buffer.concat per 64 KiB read), so
 * one 10 MiB message costs about 800 MiB of copying. This one keeps the chunks and joins them once,
 * when a newline ends the message; it parses with the SDK's own deserializeMessage. Left alone when
 * the transport does not hold a buffer of the expected shape (another SDK version).
 */
class LinearReadBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  /** Complete lines not read yet (whole messages, without their newline). */
  private lines: Buffer[] = [];

  constructor(private readonly maxBytes: number) {}

  append(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.chunks.push(chunk.subarray(start, nl));
      this.lines.push(this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks));
      this.chunks = [];
      this.size = 0;
      start = nl + 1;
    }
    if (start < chunk.length) {
      this.size += chunk.length - start;
      if (this.size > this.maxBytes) {
        this.clear();
        throw new Error(`ReadBuffer exceeded maximum size of ${this.maxBytes} bytes`);
      }
      this.chunks.push(chunk.subarray(start));
    }
  }

  readMessage(): JSONRPCMessage | null {
    const line = this.lines.shift();
    if (line === undefined) return null;
    return deserializeMessage(line.toString('utf8').replace(/\r$/, ''));
  }

  clear(): void {
    this.chunks = [];
    this.lines = [];
    this.size = 0;
  }
}

export function useLinearReadBuffer(transport: StdioClientTransport): void {
  const held = transport as unknown as { _readBuffer?: { append?: unknown; readMessage?: unknown } };
  if (typeof held._readBuffer?.append !== 'function' || typeof held._readBuffer.readMessage !== 'function') return;
  (held as { _readBuffer: unknown })._readBuffer = new LinearReadBuffer(MAX_STDIO_MESSAGE_BYTES);
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
