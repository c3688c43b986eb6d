/**
 * The Vercel AI SDK adapter (`artifact-store-sdk/ai-sdk`) with the real `ai` 6 from npm, its scripted
 * test model (MockLanguageModelV3) and the real service over HTTP. An agent calls a tool that returns
 * a 2 MB PDF as base64 (the Tableau incident's shape) and a screenshot tool, then the app saves
 * `response.messages` and runs a second turn from them: what the model receives, what the history
 * holds, and what a person downloads are checked. The AI SDK's MCP client's tools too.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMCPClient } from '@ai-sdk/mcp';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  convertToModelMessages,
  generateText,
  type ModelMessage,
  stepCountIs,
  streamText,
  tool,
  type UIMessage,
  validateUIMessages,
  wrapLanguageModel,
} from 'ai';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { artifactMiddleware, artifactTools, withArtifacts } from '../src/ai-sdk/index.js';
import type { ArtifactStore } from '../src/client/artifact-store.js';
import { createHttpArtifactStore, createInMemoryArtifactStore } from '../src/client/index.js';
import { loadConfig } from '../src/core/config.js';
import { errors } from '../src/core/errors.js';
import { startServer, type RunningServer } from '../src/node.js';
import { runExample } from './doc-blocks.js';
import { type CliServer, startCliServer } from './helpers/cli-server.js';
import { pdf, png } from './helpers/payloads.js';

type CallOptions = MockLanguageModelV3['doGenerateCalls'][number];
type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const finish = (unified: 'stop' | 'tool-calls') => ({ unified, raw: unified });
const calls = (...tools: [string, Record<string, unknown>][]): GenerateResult => ({
  content: tools.map(([toolName, input], i) => ({
    type: 'tool-call' as const,
    toolCallId: `call-${toolName}-${i}-${Math.random().toString(36).slice(2, 8)}`,
    toolName,
    input: JSON.stringify(input),
  })),
  finishReason: finish('tool-calls'),
  usage,
  warnings: [],
});
const answer = (text: string): GenerateResult => ({
  content: [{ type: 'text', text }],
  finishReason: finish('stop'),
  usage,
  warnings: [],
});

/** A model that plays a script: each call takes the next answer, and every prompt it got is kept. */
function scriptedModel(script: GenerateResult[]) {
  const prompts: CallOptions['prompt'][] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      prompts.push(options.prompt);
      const next = script.shift();
      if (!next) throw new Error('the script ran out');
      return next;
    },
  });
  return { model, prompts };
}

/** Runs of 256 or more base64 characters in a JSON text: bytes carried as text. */
const base64Runs = (value: unknown): string[] => JSON.stringify(value).match(/[A-Za-z0-9+/]{256,}={0,2}/g) ?? [];

/** A 2 MB PDF (a real one from pdf-lib, padded with a trailing comment of varied bytes). */
async function twoMegabytePdf(): Promise<Buffer> {
  const doc = await pdf(40, 'Sales Dashboard');
  const pad = Buffer.alloc(2 * 1024 * 1024 - doc.length);
  pad[0] = 0x0a;
  pad[1] = 0x25;
  for (let i = 2; i < pad.length; i++) pad[i] = 0x20 + ((i * 2654435761) >>> 25);
  return Buffer.concat([doc, pad]);
}

let server: RunningServer;
let dir: string;
let store: ArtifactStore;
let reportPdf: Buffer;
const screenshotPng = png(120_000, 3);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ai-sdk-'));
  server = await startServer(loadConfig({}, { port: 0, dataDir: dir, logLevel: 'silent', env: 'test' }));
  const token = await server.mintToken({ tenant: 'acme', sub: 'u-1', session: 'chat-1', perms: ['read', 'write'] });
  store = createHttpArtifactStore({ baseUrl: server.url, token });
  reportPdf = await twoMegabytePdf();
}, 60_000);

afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The two tools of the incident: a Tableau-like export (JSON with the PDF as base64) and a screenshot. */
function rawTools() {
  return {
    download_workbook: tool({
      description: 'Download a workbook as PDF',
      inputSchema: z.object({ workbookId: z.string() }),
      execute: async ({ workbookId }) => ({
        workbookId,
        name: 'Sales Dashboard',
        format: 'pdf',
        content: reportPdf.toString('base64'),
      }),
    }),
    screenshot: tool({
      description: 'Take a screenshot of the dashboard',
      inputSchema: z.object({}),
      // An MCP image block: the shape a tool uses to have its image shown to the model.
      execute: async () => ({ type: 'image', data: screenshotPng.toString('base64'), mimeType: 'image/png' }),
    }),
  };
}

/** The image policy shows the screenshot tool's images to the model, and no other tool's. */
const config = { images: { inline: 'preset' as const }, tools: { screenshot: { images: { inline: true } } } };

function imagePartsOf(prompt: CallOptions['prompt']) {
  const images: { data: string; mediaType: string }[] = [];
  for (const message of prompt) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result' || part.output.type !== 'content') continue;
      for (const item of part.output.value) if (item.type === 'image-data') images.push(item);
    }
  }
  return images;
}

/** The prompt without the image parts' bytes: what must hold no base64. */
function withoutImageBytes(prompt: CallOptions['prompt']): unknown {
  return JSON.parse(JSON.stringify(prompt), (key, value) =>
    key === 'data' && typeof value === 'string' && value === screenshotPng.toString('base64') ? '<image>' : value,
  );
}

describe('an agent loop: a 2 MB PDF and a screenshot, then a second turn from the saved history', () => {
  it('the model never reads base64, sees the screenshot as an image, and the history holds refs', async () => {
    const { model, prompts } = scriptedModel([
      calls(['download_workbook', { workbookId: 'wb-1' }], ['screenshot', {}]),
      answer('The report is stored; the dashboard is shown.'),
      answer('Page 1 shows the totals.'),
    ]);
    const wrapped = wrapLanguageModel({ model, middleware: artifactMiddleware({ store }) });
    const tools = withArtifacts(rawTools(), { store, config });

    const first = await generateText({ model: wrapped, tools, stopWhen: stepCountIs(4), prompt: 'Get the report' });
    expect(first.text).toBe('The report is stored; the dashboard is shown.');
    // What the app saves: the turn's messages.
    const history: ModelMessage[] = [{ role: 'user', content: 'Get the report' }, ...first.response.messages];
    const saved = JSON.parse(JSON.stringify(history)) as ModelMessage[];
    expect(base64Runs(saved)).toEqual([]);
    expect(JSON.stringify(saved).length).toBeLessThan(20_000);

    const second = await generateText({
      model: wrapped,
      tools,
      stopWhen: stepCountIs(2),
      messages: [...saved, { role: 'user', content: 'What is on page 1?' }],
    });
    expect(second.text).toBe('Page 1 shows the totals.');
    expect(prompts).toHaveLength(3);
    const turn2 = prompts[2]!;
    // The screenshot reaches the model as an image, byte for byte; nothing else carries base64.
    const images = imagePartsOf(turn2);
    expect(images.map((i) => i.mediaType)).toEqual(['image/png']);
    expect(Buffer.from(images[0]!.data, 'base64').equals(screenshotPng)).toBe(true);
    expect(base64Runs(withoutImageBytes(turn2))).toEqual([]);
    // The same on the first turn's second step, where the tools had just answered.
    expect(base64Runs(withoutImageBytes(prompts[1]!))).toEqual([]);
    expect(imagePartsOf(prompts[1]!)).toHaveLength(1);

    // The PDF: a ref in the history, and a link a person downloads byte for byte.
    const toolResults = first.steps[0]!.toolResults;
    const workbook = toolResults.find((r) => r.toolName === 'download_workbook')!.output as Record<string, unknown>;
    const { artifact: ref, summary } = workbook.content as { artifact: { id: string }; summary: string };
    expect(ref).toMatchObject({
      mimeType: 'application/pdf',
      sizeBytes: reportPdf.length,
      filename: 'Sales Dashboard.pdf',
    });
    expect(summary).toMatch(/^Downloaded workbook 'Sales Dashboard' as PDF \(2\.0 MiB\)/);
    expect(JSON.stringify(saved)).toContain(ref.id);
    const link = await store.url!(ref.id);
    const res = await fetch(link.url);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(reportPdf)).toBe(true);
  }, 60_000);

  it('streamText: tool calls streamed through the middleware keep refs in the saved messages too', async () => {
    let call = 0;
    const prompts: CallOptions['prompt'][] = [];
    const stream = (parts: unknown[]) => ({
      stream: simulateReadableStream({ chunks: parts as never[] }),
    });
    const model = new MockLanguageModelV3({
      doStream: async (options) => {
        prompts.push(options.prompt);
        call++;
        if (call === 1) {
          return stream([
            { type: 'tool-call', toolCallId: 'stream-shot-1', toolName: 'screenshot', input: '{}' },
            { type: 'finish', finishReason: finish('tool-calls'), usage },
          ]);
        }
        return stream([
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'Shown.' },
          { type: 'text-end', id: 't' },
          { type: 'finish', finishReason: finish('stop'), usage },
        ]);
      },
    });
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: artifactMiddleware({ store }) }),
      tools: withArtifacts({ screenshot: rawTools().screenshot }, { store, config }),
      stopWhen: stepCountIs(3),
      prompt: 'Show me',
    });
    expect(await result.text).toBe('Shown.');
    const messages = (await result.response).messages;
    expect(base64Runs(messages)).toEqual([]);
    expect(JSON.stringify(messages)).toMatch(/"image-url","url":"artifact:\/\/screenshot_[0-9a-f]{24}"/);
    expect(imagePartsOf(prompts[1]!)).toHaveLength(1);
  }, 30_000);

  it('without the middleware, the wrapped tools still show the image (its bytes read from the store)', async () => {
    const { model, prompts } = scriptedModel([calls(['screenshot', {}]), answer('Shown.')]);
    const result = await generateText({
      model,
      tools: withArtifacts({ screenshot: rawTools().screenshot }, { store, config }),
      stopWhen: stepCountIs(3),
      prompt: 'Show me',
    });
    const images = imagePartsOf(prompts[1]!);
    expect(Buffer.from(images[0]!.data, 'base64').equals(screenshotPng)).toBe(true);
    // The tool's output (what useChat's UI messages keep) holds the ref, not the bytes.
    const output = result.steps[0]!.toolResults[0]!.output;
    expect(base64Runs(output)).toEqual([]);
    expect(JSON.stringify(output)).toMatch(/artifact:\/\/screenshot_[0-9a-f]{24}/);
  }, 30_000);
});

describe("useChat's history: UI messages that keep the wrapped tools' outputs", () => {
  it('validate against the wrapped tools and convert to a prompt with the image read from the store', async () => {
    // A tool with an outputSchema: the wrapped output is no longer its shape, so the schema goes.
    const screenshot = tool({
      description: 'Screenshot',
      inputSchema: z.object({}),
      outputSchema: z.object({ type: z.literal('image'), data: z.string(), mimeType: z.string() }),
      execute: async () => ({ type: 'image' as const, data: screenshotPng.toString('base64'), mimeType: 'image/png' }),
    });
    const tools = withArtifacts({ screenshot }, { store, config });
    expect(tools.screenshot).not.toHaveProperty('outputSchema');
    const output = await (tools.screenshot.execute!({}, { toolCallId: 'ui-1', messages: [] }) as Promise<unknown>);
    const messages: UIMessage[] = [
      { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Show me' }] },
      {
        id: 'a1',
        role: 'assistant',
        parts: [{ type: 'tool-screenshot', toolCallId: 'ui-1', state: 'output-available', input: {}, output }],
      },
    ];
    // What the app stored holds the ref, and passes the SDK's validation with the same tools.
    expect(base64Runs(messages)).toEqual([]);
    const valid = await validateUIMessages({ messages: JSON.parse(JSON.stringify(messages)), tools });
    const prompt = await convertToModelMessages(valid, { tools });
    // In a new process no middleware saw this call: the image's bytes come from the store.
    const images = prompt
      .flatMap((m) => (m.role === 'tool' ? m.content : []))
      .flatMap((p) => (p.type === 'tool-result' && p.output.type === 'content' ? p.output.value : []))
      .filter((v) => v.type === 'image-data');
    expect(images).toHaveLength(1);
    expect(Buffer.from((images[0] as { data: string }).data, 'base64').equals(screenshotPng)).toBe(true);
  });
});

describe('the AI SDK MCP client: its tools wrapped like any other', () => {
  it('an MCP server answering with the PDF as base64 inside JSON text and an image block', async () => {
    const mcp = new McpServer({ name: 'tableau', version: '1.0.0' });
    mcp.registerTool('download_workbook', { description: 'Download a workbook as PDF' }, async () => ({
      content: [{ type: 'text', text: JSON.stringify({ content: reportPdf.toString('base64'), format: 'pdf' }) }],
    }));
    mcp.registerTool('screenshot', { description: 'Screenshot' }, async () => ({
      content: [{ type: 'image', data: screenshotPng.toString('base64'), mimeType: 'image/png' }],
    }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await mcp.connect(serverSide);
    const client = await createMCPClient({ transport: clientSide });
    try {
      const tools = withArtifacts(await client.tools(), { store, serverName: 'tableau', config });
      const { model, prompts } = scriptedModel([calls(['download_workbook', {}], ['screenshot', {}]), answer('Done.')]);
      const result = await generateText({
        model: wrapLanguageModel({ model, middleware: artifactMiddleware({ store }) }),
        tools,
        stopWhen: stepCountIs(3),
        prompt: 'Export it',
      });
      expect(result.text).toBe('Done.');
      expect(base64Runs(result.response.messages)).toEqual([]);
      // The workbook's PDF was found inside the JSON text and stored under the server's namespace.
      expect(JSON.stringify(result.response.messages)).toMatch(/tableau\.download_workbook_[0-9a-f]{24}/);
      expect(base64Runs(withoutImageBytes(prompts[1]!))).toEqual([]);
      expect(imagePartsOf(prompts[1]!)).toHaveLength(1);
    } finally {
      await client.close();
      await mcp.close();
    }
  }, 30_000);
});

describe('the read-back tools as AI SDK tools', () => {
  it('the model reads the stored PDF by page and searches it, with the tool calls the answers name', async () => {
    const { model, prompts } = scriptedModel([
      calls(['download_workbook', { workbookId: 'wb-2' }]),
      // The id comes from the first answer; the script fills it in below.
      calls(['artifact_read', { id: '<id>', page: 2 }], ['artifact_search', { id: '<id>', pattern: 'Region 7:' }]),
      calls(['artifact_read', { id: 'no-such_000000000000000000000000' }]),
      answer('Page 2 is read.'),
    ]);
    const script = model.doGenerate;
    model.doGenerate = async (options) => {
      const result = await script(options);
      const id = /download_workbook_[0-9a-f]{24}/.exec(JSON.stringify(options.prompt))?.[0];
      if (id)
        for (const part of result.content) if (part.type === 'tool-call') part.input = part.input.replace('<id>', id);
      return result;
    };
    const tools = {
      ...withArtifacts({ download_workbook: rawTools().download_workbook }, { store, config: { viewTools: true } }),
      ...artifactTools(store),
    };
    expect(Object.keys(tools).sort()).toEqual([
      'artifact_info',
      'artifact_list',
      'artifact_query',
      'artifact_read',
      'artifact_search',
      'artifact_url',
      'download_workbook',
    ]);
    const result = await generateText({ model, tools, stopWhen: stepCountIs(5), prompt: 'Read page 2' });
    expect(result.text).toBe('Page 2 is read.');
    const [read, search] = result.steps[1]!.toolResults;
    expect(read!.output).toMatch(/^Sales Dashboard\.pdf \(application\/pdf, 2\.0 MiB\), page 2 of 40/);
    expect(read!.output).toMatch(/Region 7: 52243 units/);
    expect(search!.output).toMatch(/Region 7: 52243 units/);
    // An id that is not there: a tool error the model reads, saying so.
    const missing = result.steps[2]!.content.find((p) => p.type === 'tool-error') as { error: Error } | undefined;
    expect(String(missing?.error)).toMatch(/no-such_000000000000000000000000/);
    expect(JSON.stringify(prompts[3])).toContain('"type":"error-text"');
  }, 30_000);
});

describe('the middleware on prompts the app builds', () => {
  it('a PDF file part is stored once and reaches the model as a ref; an image part keeps its bytes', async () => {
    const memory = createInMemoryArtifactStore({ scope: { tenantId: 't', sessionId: 's' } });
    let puts = 0;
    const counting: ArtifactStore = new Proxy(memory, {
      get(target, prop, receiver) {
        if (prop === 'putBytes') {
          return (...args: Parameters<ArtifactStore['putBytes']>) => {
            puts++;
            return target.putBytes(...args);
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    });
    const { model, prompts } = scriptedModel([answer('one'), answer('two')]);
    const wrapped = wrapLanguageModel({ model, middleware: artifactMiddleware({ store: counting }) });
    const messages: ModelMessage[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Summarize these' },
          { type: 'file', data: reportPdf.toString('base64'), mediaType: 'application/pdf', filename: 'report.pdf' },
          { type: 'image', image: screenshotPng, mediaType: 'image/png' },
        ],
      },
    ];
    await generateText({ model: wrapped, messages });
    await generateText({ model: wrapped, messages });
    expect(puts).toBe(2); // the PDF and the image, once each over both calls
    for (const prompt of prompts) {
      const user = prompt.find((m) => m.role === 'user')!;
      const [text, file, image] = user.content as unknown as Array<Record<string, unknown>>;
      expect(text).toMatchObject({ type: 'text', text: 'Summarize these' });
      expect(file).toMatchObject({ type: 'text' });
      expect(String(file!.text)).toMatch(
        /^\[file report\.pdf, application\/pdf, 2(\.0)? MiB: stored as artifact:\/\/prompt_[0-9a-f]{24}; read it with the artifact tools\]$/,
      );
      expect(image).toMatchObject({ type: 'file', mediaType: 'image/png' });
    }
    const listed = await memory.list();
    expect(listed.items.map((i) => i.mimeType).sort()).toEqual(['application/pdf', 'image/png']);
  });

  it('modelTypes lets a PDF-reading model have the PDF; a ref to an artifact that is gone says so', async () => {
    const memory = createInMemoryArtifactStore({ scope: { tenantId: 't', sessionId: 's' } });
    const ref = await memory.putBytes(reportPdf, { mimeType: 'application/pdf', filename: 'report.pdf' });
    const { model, prompts } = scriptedModel([answer('read it')]);
    const wrapped = wrapLanguageModel({
      model,
      middleware: artifactMiddleware({ store: memory, modelTypes: ['image/', 'application/pdf'] }),
    });
    const asRef: ModelMessage = {
      role: 'user',
      content: [{ type: 'file', data: new URL(`artifact://${ref.id}`), mediaType: 'application/pdf' }],
    };
    await generateText({ model: wrapped, messages: [asRef] });
    const file = (prompts[0]!.find((m) => m.role === 'user')!.content as unknown as Array<Record<string, unknown>>)[0]!;
    expect(file).toMatchObject({ type: 'file', mediaType: 'application/pdf' });
    expect(Buffer.from(file.data as Uint8Array).equals(reportPdf)).toBe(true);

    await memory.delete(ref.id);
    await expect(generateText({ model: wrapped, messages: [asRef] })).rejects.toThrow(
      new RegExp(`Artifact ${ref.id} is referenced in the conversation but the store no longer has it`),
    );
  });

  it('a big tool result from an unwrapped tool in the history is transformed before the model reads it', async () => {
    const memory = createInMemoryArtifactStore({ scope: { tenantId: 't', sessionId: 's' } });
    const { model, prompts } = scriptedModel([answer('ok')]);
    const history: ModelMessage[] = [
      { role: 'user', content: 'export' },
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'export', input: {} }],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'export',
            output: { type: 'json', value: { file: reportPdf.toString('base64') } },
          },
        ],
      },
    ];
    await generateText({
      model: wrapLanguageModel({ model, middleware: artifactMiddleware({ store: memory }) }),
      messages: history,
    });
    expect(base64Runs(prompts[0])).toEqual([]);
    expect(JSON.stringify(prompts[0])).toMatch(/export_[0-9a-f]{24}/);
  });

  it('refuses to be built without a store, saying what to pass', () => {
    expect(() => artifactMiddleware({} as never)).toThrow(/needs a store/);
    expect(() => withArtifacts({}, undefined as never)).toThrow(/needs a store/);
  });
});

describe('failures', () => {
  it('a tool that throws is the AI SDK tool error, and nothing is stored for it', async () => {
    const memory = createInMemoryArtifactStore({ scope: { tenantId: 't', sessionId: 's' } });
    const failing = tool({
      description: 'fails',
      inputSchema: z.object({}),
      execute: async (): Promise<string> => {
        throw new Error('upstream 502');
      },
    });
    const { model } = scriptedModel([calls(['failing', {}]), answer('sorry')]);
    const result = await generateText({
      model,
      tools: withArtifacts({ failing }, { store: memory }),
      stopWhen: stepCountIs(3),
      prompt: 'go',
    });
    const errors = result.steps[0]!.content.filter((p) => p.type === 'tool-error');
    expect(errors).toHaveLength(1);
    expect(String((errors[0] as { error: unknown }).error)).toMatch(/upstream 502/);
    expect((await memory.list()).items).toEqual([]);
  });

  it('a screenshot the store refuses: no base64 in the output or the prompt, and the call still answers', async () => {
    const memory = createInMemoryArtifactStore({ scope: { tenantId: 't', sessionId: 's' } });
    const refuse = async () => {
      throw errors.quotaExceeded('Tenant t is over its 1 MiB quota', { limitBytes: 1024 * 1024 });
    };
    const full: ArtifactStore = new Proxy(memory, {
      get: (target, prop, receiver) =>
        prop === 'putBytes' || prop === 'putStream' || prop === 'putText'
          ? refuse
          : Reflect.get(target, prop, receiver),
    });
    const big = png(90_000, 5); // over the guardrail's budget as base64, under the image policy's limit
    const shot = tool({
      description: 'Screenshot',
      inputSchema: z.object({}),
      execute: async () => ({ type: 'image', data: big.toString('base64'), mimeType: 'image/png' }),
    });
    const { model, prompts } = scriptedModel([calls(['screenshot', {}]), answer('ok')]);
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: artifactMiddleware({ store: full }) }),
      tools: withArtifacts({ screenshot: shot }, { store: full, config }),
      stopWhen: stepCountIs(3),
      prompt: 'go',
    });
    expect(result.steps[0]!.content.filter((p) => p.type === 'tool-error')).toEqual([]);
    expect(base64Runs(result.response.messages)).toEqual([]);
    expect(base64Runs(prompts[1])).toEqual([]);
    expect(imagePartsOf(prompts[1]!)).toEqual([]);
    expect(JSON.stringify(prompts[1])).toMatch(/over its 1 MiB quota/);
  });

  it('a store over its quota: the model is told the payload was not stored, and gets no bytes', async () => {
    const memory = createInMemoryArtifactStore({ scope: { tenantId: 't', sessionId: 's' } });
    const refuse = async () => {
      throw errors.quotaExceeded('Tenant t is over its 1 MiB quota', { limitBytes: 1024 * 1024 });
    };
    const tiny: ArtifactStore = new Proxy(memory, {
      get: (target, prop, receiver) =>
        prop === 'putBytes' || prop === 'putStream' || prop === 'putText'
          ? refuse
          : Reflect.get(target, prop, receiver),
    });
    const { model, prompts } = scriptedModel([calls(['download_workbook', { workbookId: 'x' }]), answer('ok')]);
    const result = await generateText({
      model,
      tools: withArtifacts({ download_workbook: rawTools().download_workbook }, { store: tiny }),
      stopWhen: stepCountIs(3),
      prompt: 'go',
    });
    expect(base64Runs(result.response.messages)).toEqual([]);
    expect(base64Runs(prompts[1])).toEqual([]);
    expect(JSON.stringify(prompts[1])).toMatch(/over its 1 MiB quota/);
    expect((await memory.list()).items).toEqual([]);
  });
});

describe('examples/ai-sdk.ts, as docs/ai-sdk.md shows it', () => {
  let cli: CliServer;
  let cliDir: string;
  beforeAll(async () => {
    cliDir = await mkdtemp(join(tmpdir(), 'ai-sdk-example-'));
    cli = await startCliServer(cliDir);
  });
  afterAll(async () => {
    await cli?.stop();
    if (cliDir) await rm(cliDir, { recursive: true, force: true });
  });

  it('runs two turns with the token `artifact-store serve` prints: refs in the history, the PDF behind its link', async () => {
    const out = await runExample('ai-sdk.ts', { ARTIFACT_STORE_URL: cli.url, ARTIFACT_STORE_TOKEN: cli.token });
    expect(out).toMatch(/^the saved history: \d+ characters, base64 in it: none$/m);
    const size = Number(/^the saved history: (\d+) characters/m.exec(out)?.[1]);
    expect(size).toBeLessThan(20_000);
    const [, id, bytes] = /^the PDF: artifact (download_report_[0-9a-f]{24}), (\d+) bytes$/m.exec(out) ?? [];
    expect(Number(bytes)).toBeGreaterThan(50_000);
    expect(out).toMatch(/^the second turn's prompt: images image\/png$/m);
    const link = /^download link: (http:\/\/\S+)$/m.exec(out)?.[1];
    const res = await fetch(link!);
    expect(res.status).toBe(200);
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.length).toBe(Number(bytes));
    expect(body.subarray(0, 5).toString()).toBe('%PDF-');
    // What the link served is what the store holds under that id.
    const stored = await createHttpArtifactStore({ baseUrl: cli.url, token: cli.token }).get(id!);
    expect(Buffer.from(stored!).equals(body)).toBe(true);
  }, 90_000);
});
