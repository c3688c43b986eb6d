/**
 * artifact-store-sdk/langchain with the real packages from npm (@langchain/core, @langchain/langgraph)
 * and a scripted chat model (no network, no key) that records every prompt it receives. A LangGraph
 * agent (StateGraph + ToolNode + a MemorySaver checkpointer) calls a tool that returns a 2 MiB PDF as
 * base64 inside JSON and a tool that returns a screenshot, answers, then takes a second turn, against
 * the service over HTTP. Also: what a throwing tool and a store that refuses (quota) do, the
 * serializer's round trip of every shape it stores, and examples/langchain.ts, the doc's example.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import { Annotation, Command, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { JsonPlusSerializer } from '@langchain/langgraph-checkpoint';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { ArtifactStore } from '../src/client/artifact-store.js';
import { createHttpArtifactStore, createInMemoryArtifactStore, createNoOpArtifactStore } from '../src/client/index.js';
import { loadConfig } from '../src/core/config.js';
import type { ArtifactRef } from '../src/core/schemas.js';
import { artifactSerializer, artifactTools, withArtifactCheckpoints, withArtifacts } from '../src/langchain/index.js';
import { type RunningServer, startServer } from '../src/node.js';
import { ROOT, runExample } from './doc-blocks.js';
import { sha256 } from './helpers/app.js';
import { pngOf } from './helpers/images.js';
import { pdf } from './helpers/payloads.js';

const TWO_MIB = 2 * 1024 * 1024;
/** What the assertions call base64 in a prompt or a checkpoint: a run of 256 base64 characters. */
const BASE64_RUN = /[A-Za-z0-9+/]{256,}/;

/** A real 120-page PDF (pdf-lib), padded to exactly 2 MiB with a trailing comment of varied bytes. */
async function reportPdf(): Promise<Buffer> {
  const doc = await pdf(120, 'Sales Dashboard');
  const pad = Buffer.alloc(TWO_MIB - doc.length);
  pad[0] = 0x0a;
  pad[1] = 0x25; // '%'
  for (let i = 2; i < pad.length; i++) pad[i] = 0x20 + ((i * 2654435761) >>> 25);
  return Buffer.concat([doc, pad]);
}

/** A chat model that answers from a script and records every prompt it receives. */
class ScriptedChatModel extends BaseChatModel {
  readonly prompts: BaseMessage[][] = [];
  constructor(private readonly script: ((messages: BaseMessage[]) => AIMessage)[]) {
    super({});
  }
  _llmType(): string {
    return 'scripted';
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.prompts.push(messages);
    const next = this.script[this.prompts.length - 1];
    if (!next) throw new Error(`the script has no answer for call ${this.prompts.length}`);
    const message = next(messages);
    return { generations: [{ message, text: typeof message.content === 'string' ? message.content : '' }] };
  }
}

/** The agent: the model, then the tools while it calls any, then the model again. */
function agentOf(
  model: ScriptedChatModel,
  tools: ConstructorParameters<typeof ToolNode>[0],
  checkpointer: MemorySaver,
) {
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode('tools', new ToolNode(tools))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', toolsCondition)
    .addEdge('tools', 'agent')
    .compile({ checkpointer });
}

const toolMessage = (messages: BaseMessage[], name: string) =>
  messages.find((m): m is ToolMessage => ToolMessage.isInstance(m) && m.name === name);

/** Every checkpoint and pending write a MemorySaver holds, as the text it saved. */
function savedText(saver: MemorySaver): string {
  const decode = (v: unknown) => (v instanceof Uint8Array ? new TextDecoder().decode(v) : String(v));
  const parts: string[] = [];
  for (const namespaces of Object.values(saver.storage))
    for (const checkpoints of Object.values(namespaces))
      for (const [checkpoint, metadata] of Object.values(checkpoints)) parts.push(decode(checkpoint), decode(metadata));
  for (const writes of Object.values(saver.writes))
    for (const [, , value] of Object.values(writes)) parts.push(decode(value));
  return parts.join('\n');
}

describe('a LangGraph agent with withArtifacts and withArtifactCheckpoints, against the service over HTTP', () => {
  let dir: string;
  let server: RunningServer;
  let store: ArtifactStore;
  let report: Buffer;
  let screenshot: Buffer;
  const THREAD = { configurable: { thread_id: 'thread-1' } };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'langchain-'));
    server = await startServer(loadConfig({}, { port: 0, dataDir: dir, logLevel: 'silent', env: 'development' }));
    store = createHttpArtifactStore({ baseUrl: server.url, token: server.token, scope: { sessionId: 'thread-1' } });
    report = await reportPdf();
    screenshot = pngOf(1280, 720, 120_000);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const downloadReport = tool(
    async ({ title }: { title: string }) =>
      // Tableau's shape: the PDF as base64 inside the JSON text of the result.
      JSON.stringify({ name: title, format: 'pdf', content: report.toString('base64') }),
    {
      name: 'download_report',
      description: 'Downloads a dashboard as a PDF.',
      schema: z.object({ title: z.string() }),
    },
  );
  const takeScreenshot = tool(
    async ({ url }: { url: string }) => [
      { type: 'text', text: `Screenshot of ${url}` },
      { type: 'image', mimeType: 'image/png', data: screenshot.toString('base64') },
    ],
    {
      name: 'take_screenshot',
      description: 'Takes a screenshot of a page.',
      schema: z.object({ url: z.string() }),
    },
  );

  it('the model reads refs and sees the screenshot; the second turn sends no base64; the PDF downloads byte-identical; the checkpoint holds refs and restores', async () => {
    let pdfRef: ArtifactRef | undefined;
    const model = new ScriptedChatModel([
      () =>
        new AIMessage({
          content: '',
          tool_calls: [
            { id: 'call-1', name: 'download_report', args: { title: 'Sales Dashboard' } },
            { id: 'call-2', name: 'take_screenshot', args: { url: 'https://dash.example/sales' } },
          ],
        }),
      () => new AIMessage('Here are the report and the dashboard.'),
      // The second turn: a link for the person, and a look inside the PDF.
      (messages) => {
        pdfRef = toolMessage(messages, 'download_report')!.artifact as ArtifactRef;
        return new AIMessage({
          content: '',
          tool_calls: [
            { id: 'call-3', name: 'artifact_url', args: { id: pdfRef.id } },
            { id: 'call-4', name: 'artifact_read', args: { id: pdfRef.id, page: 2 } },
          ],
        });
      },
      () => new AIMessage('The link is above.'),
    ]);
    const config = { tools: { take_screenshot: { images: { inline: true } } }, viewTools: true };
    const tools = [...withArtifacts([downloadReport, takeScreenshot], { store, config }), ...artifactTools(store)];
    const saver = withArtifactCheckpoints(new MemorySaver(), { store, restore: 'refs', ttl: 24 * 3600 });
    const agent = agentOf(model, tools, saver);

    await agent.invoke(
      { messages: [new HumanMessage('Get me the sales report and a screenshot of the dashboard.')] },
      THREAD,
    );

    // After the tools: the PDF is a ref and a line; the screenshot is an image block, as the policy says.
    const afterTools = model.prompts[1]!;
    const pdfMessage = toolMessage(afterTools, 'download_report')!;
    expect(typeof pdfMessage.content).toBe('string');
    expect(pdfMessage.content).toMatch(/stored as artifact download_report_[0-9a-f]{24}/);
    expect(pdfMessage.content).not.toMatch(BASE64_RUN);
    expect(pdfMessage.artifact).toMatchObject({
      mimeType: 'application/pdf',
      sizeBytes: TWO_MIB,
      sha256: sha256(report),
    });
    const shot = toolMessage(afterTools, 'take_screenshot')!;
    expect(shot.content).toEqual([
      { type: 'text', text: 'Screenshot of https://dash.example/sales' },
      { type: 'image', mimeType: 'image/png', data: screenshot.toString('base64') },
      {
        type: 'text',
        text: expect.stringMatching(
          /^PNG image .* stored as artifact take_screenshot_[0-9a-f]{24}\. Shown above \(1280×720 px\)\.$/,
        ),
      },
    ]);
    expect(shot.artifact).toMatchObject({ mimeType: 'image/png', sizeBytes: screenshot.length });
    // The whole first turn, as sent: the image's base64 and nothing else.
    const sent1 = JSON.stringify(afterTools).replace(screenshot.toString('base64'), '<the screenshot>');
    expect(sent1).not.toMatch(BASE64_RUN);

    await agent.invoke({ messages: [new HumanMessage('Send me a link to the PDF.')] }, THREAD);

    // The second turn's prompt came from the checkpoint: refs, no base64 at all.
    const secondTurn = model.prompts[2]!;
    expect(secondTurn).toHaveLength(6);
    expect(JSON.stringify(secondTurn)).not.toMatch(BASE64_RUN);
    expect(toolMessage(secondTurn, 'take_screenshot')!.content).toEqual([
      { type: 'text', text: 'Screenshot of https://dash.example/sales' },
      {
        type: 'text',
        text: expect.stringMatching(
          /^\[image\/png, 117(\.\d)? KiB — in artifact checkpoint_[0-9a-f]{24}, saved as \{"encoding":"base64","block":\{.*\}\]$/,
        ),
      },
      { type: 'text', text: expect.stringMatching(/Shown above/) },
    ]);
    const last = model.prompts[3]!;
    expect(JSON.stringify(last)).not.toMatch(BASE64_RUN);

    // The read-back tools: a link that downloads the PDF byte for byte, and page 2's text.
    const link = /https?:\/\/\S+/.exec(String(toolMessage(last, 'artifact_url')!.content))![0];
    const res = await fetch(link);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await res.arrayBuffer()).equals(report)).toBe(true);
    expect(toolMessage(last, 'artifact_read')!.content).toContain('Sales Dashboard: page 2 of 120');

    // What the checkpointer saved: markers, no base64.
    const saved = savedText(saver);
    expect(saved).toContain('"$artifact"');
    expect(saved).not.toMatch(BASE64_RUN);

    // Restored with the bytes: a saver over the same storage gives back the screenshot as it was.
    const restoring = withArtifactCheckpoints(new MemorySaver(), { store });
    restoring.storage = saver.storage;
    restoring.writes = saver.writes;
    const tuple = await restoring.getTuple(THREAD);
    const messages = tuple!.checkpoint.channel_values.messages as BaseMessage[];
    expect(messages).toHaveLength(10);
    const restored = toolMessage(messages, 'take_screenshot')!;
    expect(restored).toBeInstanceOf(ToolMessage);
    expect(restored.content).toEqual(shot.content);
    expect(restored.artifact).toEqual(shot.artifact);
    expect(toolMessage(messages, 'download_report')!.artifact).toEqual(pdfRef);
  }, 120_000);
});

describe('bad input: a tool that throws, a store that refuses', () => {
  let dir: string;
  let server: RunningServer;
  let store: ArtifactStore;
  let report: Buffer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'langchain-quota-'));
    // A session may hold 1 MiB, and a put over it is refused rather than making room.
    const config = { maxSessionBytes: 1024 * 1024, cleanupStrategy: 'reject' as const };
    server = await startServer(
      loadConfig({}, { port: 0, dataDir: dir, logLevel: 'silent', env: 'development', ...config }),
    );
    store = createHttpArtifactStore({ baseUrl: server.url, token: server.token, scope: { sessionId: 'quota' } });
    report = await reportPdf();
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a tool that throws: the error reaches ToolNode (an error ToolMessage) or the caller, as without the wrapper; nothing is stored', async () => {
    const failing = tool(
      async () => {
        throw new Error('Tableau answered 503: try again in a minute');
      },
      { name: 'download_report', description: 'Downloads a dashboard.', schema: z.object({ title: z.string() }) },
    );
    const [wrapped] = withArtifacts([failing], { store });
    await expect(wrapped!.invoke({ title: 'x' })).rejects.toThrow('Tableau answered 503: try again in a minute');
    const node = new ToolNode([wrapped!]);
    const out = await node.invoke({
      messages: [
        new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'download_report', args: { title: 'x' } }] }),
      ],
    });
    const answer = out.messages[0] as ToolMessage;
    expect(answer.status).toBe('error');
    expect(answer.content).toContain('Tableau answered 503: try again in a minute');
    expect((await store.list({})).items).toEqual([]);
  });

  it('a store over quota: the model reads that the PDF was not stored, never its base64', async () => {
    const download = tool(async () => JSON.stringify({ name: 'Q3', content: report.toString('base64') }), {
      name: 'download_report',
      description: 'Downloads a dashboard.',
      schema: z.object({ title: z.string() }),
    });
    const message = (await withArtifacts(download, { store }).invoke({
      id: 'c1',
      name: 'download_report',
      args: { title: 'Q3' },
      type: 'tool_call',
    })) as ToolMessage;
    expect(message.content).toMatch(/not stored/i);
    expect(message.content).toContain('quota_exceeded');
    expect(message.content).not.toMatch(BASE64_RUN);
    expect(message.artifact).toBeUndefined();
    expect((await store.list({})).items).toEqual([]);
  });

  it('a checkpoint the store refuses is not saved, with an error that says so; the last one saved stands', async () => {
    const model = new ScriptedChatModel([() => new AIMessage('Got it.'), () => new AIMessage('Got that too.')]);
    const saver = withArtifactCheckpoints(new MemorySaver(), { store });
    const agent = agentOf(model, [], saver);
    const thread = { configurable: { thread_id: 'quota-thread' } };
    await agent.invoke({ messages: [new HumanMessage('hello')] }, thread);
    const before = await saver.getTuple(thread);
    expect(before!.checkpoint.channel_values.messages).toHaveLength(2);

    // The user attaches the 2 MiB PDF: over the session's 1 MiB.
    const attached = new HumanMessage({
      content: [
        { type: 'text', text: 'Read this.' },
        { type: 'file', mimeType: 'application/pdf', data: report.toString('base64') },
      ],
    });
    const refused = await agent.invoke({ messages: [attached] }, thread).catch((err: Error) => err);
    expect((refused as Error).message).toMatch(
      /^The checkpoint was not saved: the artifact store did not take one of its payloads \(.*quota.*\)\. The value that held it was not written; the last checkpoint saved stands\.$/i,
    );
    const after = await saver.getTuple(thread);
    expect(after!.checkpoint.id).toBe(before!.checkpoint.id);
    expect(savedText(saver)).not.toMatch(BASE64_RUN);
    expect((await store.list({})).items).toEqual([]);
  });
});

describe('withArtifacts', () => {
  const store = createInMemoryArtifactStore();
  const lookup = tool(async ({ q }: { q: string }) => `found ${q}`, {
    name: 'lookup',
    description: 'Looks a word up.',
    schema: z.object({ q: z.string().describe('the word') }),
    returnDirect: true,
  });

  it('keeps the name, description, schema and returnDirect; answers content_and_artifact; a small result passes as it is', async () => {
    const wrapped = withArtifacts(lookup, { store });
    expect(wrapped.name).toBe('lookup');
    expect(wrapped.description).toBe('Looks a word up.');
    expect(wrapped.schema).toBe(lookup.schema);
    expect(wrapped.returnDirect).toBe(true);
    expect(wrapped.responseFormat).toBe('content_and_artifact');
    const message = (await wrapped.invoke({
      id: 'c',
      name: 'lookup',
      args: { q: 'ref' },
      type: 'tool_call',
    })) as ToolMessage;
    expect(message.content).toBe('found ref');
    expect(message.artifact).toBeUndefined();
    // Called with its arguments only, it gives the content, as any tool does.
    expect(await wrapped.invoke({ q: 'x' })).toBe('found x');
    await expect(wrapped.invoke({ q: 1 } as never)).rejects.toThrow(/did not match expected schema/);
  });

  it('an oversized result goes through the guardrail: stored whole, the model reads a ref and a preview', async () => {
    // Under the transformer's size net (10,000 characters), over this guardrail's budget.
    const rows = tool(async () => Array.from({ length: 300 }, (_, i) => ({ id: i, name: `row ${i}` })), {
      name: 'list_rows',
      description: 'Lists rows.',
      schema: z.object({}),
    });
    const events: string[] = [];
    const wrapped = withArtifacts(rows, {
      store,
      guardrail: { maxObservationChars: 2000, autoArtifactThreshold: 1000 },
      onEvent: (e) => events.push(e.type),
    });
    const message = (await wrapped.invoke({ id: 'c', name: 'list_rows', args: {}, type: 'tool_call' })) as ToolMessage;
    expect(String(message.content).length).toBeLessThanOrEqual(2000);
    // One ref: the whole observation, stored by the guardrail.
    const whole = message.artifact as ArtifactRef;
    expect(whole).toMatchObject({ mimeType: 'application/json', source: { tool: 'list_rows', clamped: true } });
    expect(String(message.content)).toContain(whole.id);
    expect(events).toEqual(['observation.clamped']);
    expect(new TextDecoder().decode((await store.get(whole.id))!)).toContain('row 299');
  });

  it("a tool's own content_and_artifact keeps its artifact, beside the refs, with its bytes and base64 stored", async () => {
    const report = await pdf(2);
    const png = pngOf(64, 48, 4000);
    const own = tool(
      async () => [
        JSON.stringify({ pdf: report.toString('base64') }),
        {
          rows: 2,
          png: new Uint8Array(png),
          buffer: png,
          nested: [{ mimeType: 'application/pdf', data: report.toString('base64') }],
          log: `trace ${'QUJD'.repeat(100)} end`,
        },
      ],
      { name: 'export', description: 'Exports.', schema: z.object({}), responseFormat: 'content_and_artifact' },
    );
    const message = (await withArtifacts(own, { store }).invoke({
      id: 'c',
      name: 'export',
      args: {},
      type: 'tool_call',
    })) as ToolMessage;
    expect(message.content).not.toMatch(BASE64_RUN);
    const { refs, artifact } = message.artifact as { refs: ArtifactRef[]; artifact: Record<string, unknown> };
    expect(artifact.rows).toBe(2);
    // No byte array and no base64 left in the artifact: refs stand in their place.
    expect(JSON.stringify(artifact)).not.toMatch(BASE64_RUN);
    expect(Object.values(artifact).some((v) => v instanceof Uint8Array)).toBe(false);
    expect(artifact.png).toMatchObject({ mimeType: 'image/png', sizeBytes: png.length });
    // The same bytes twice are one artifact (each put renews its access time, so compare ids).
    expect((artifact.buffer as ArtifactRef).id).toBe((artifact.png as ArtifactRef).id);
    expect(artifact.nested).toEqual([
      { mimeType: 'application/pdf', data: expect.objectContaining({ sizeBytes: report.length }) },
    ]);
    expect(artifact.log).toMatchObject({ mimeType: 'text/plain; charset=utf-8' });
    const ids = refs.map((r) => r.id);
    for (const v of [artifact.png, (artifact.nested as { data: ArtifactRef }[])[0]!.data, artifact.log])
      expect(ids).toContain((v as ArtifactRef).id);
    expect(await store.get((artifact.png as ArtifactRef).id)).toEqual(new Uint8Array(png));
    expect(new TextDecoder().decode((await store.get((artifact.log as ArtifactRef).id))!)).toContain('trace QUJD');
  });

  it('a tool that returns a Command still updates the graph state through ToolNode', async () => {
    const State = Annotation.Root({ ...MessagesAnnotation.spec, report: Annotation<string | undefined>() });
    const pick = tool(
      async (_input: Record<string, never>, config) =>
        new Command({
          update: {
            report: 'Q3',
            messages: [new ToolMessage({ content: 'picked Q3', tool_call_id: config.toolCall!.id! })],
          },
        }),
      { name: 'pick', description: 'Picks a report.', schema: z.object({}) },
    );
    const graph = new StateGraph(State)
      .addNode('tools', new ToolNode(withArtifacts([pick], { store })))
      .addEdge(START, 'tools')
      .compile();
    const out = await graph.invoke({
      messages: [new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'pick', args: {} }] })],
    });
    expect(out.report).toBe('Q3');
    expect(out.messages.at(-1)).toMatchObject({ content: 'picked Q3', tool_call_id: 'c1' });
  });

  it('a tool that returns a ToolMessage: its content and artifact go through the store, its other fields stay', async () => {
    const report = await pdf(2);
    const answer = tool(
      async (_input: Record<string, never>, config) =>
        new ToolMessage({
          content: JSON.stringify({ name: 'Q3', pdf: report.toString('base64') }),
          artifact: { raw: new Uint8Array(report) },
          tool_call_id: config.toolCall!.id!,
          name: 'answer',
          status: 'success',
          additional_kwargs: { page: 3 },
        }),
      { name: 'answer', description: 'Answers.', schema: z.object({}) },
    );
    const message = (await withArtifacts(answer, { store }).invoke({
      id: 'c9',
      name: 'answer',
      args: {},
      type: 'tool_call',
    })) as ToolMessage;
    expect(ToolMessage.isInstance(message)).toBe(true);
    expect(message).toMatchObject({
      tool_call_id: 'c9',
      name: 'answer',
      status: 'success',
      additional_kwargs: { page: 3 },
    });
    expect(message.content).not.toMatch(BASE64_RUN);
    expect(message.content).toMatch(/answer_[0-9a-f]{24}/);
    const { refs, artifact } = message.artifact as { refs: ArtifactRef[]; artifact: { raw: ArtifactRef } };
    expect(artifact.raw).toMatchObject({ mimeType: 'application/pdf', sizeBytes: report.length });
    // The same PDF in the content and in the artifact: stored once.
    expect(refs.map((r) => r.id)).toEqual([artifact.raw.id]);
  });

  it('images in the shapes LangChain writes them become refs, or image blocks where the policy shows them', async () => {
    const png = pngOf(64, 48, 4000);
    const b64 = png.toString('base64');
    const shapes = tool(
      async () => [
        { type: 'image_url', image_url: { url: `data:image/png;base64,${b64}` } },
        { type: 'image', source_type: 'base64', mime_type: 'image/png', data: b64 },
      ],
      { name: 'shapes', description: 'Draws.', schema: z.object({}) },
    );
    const hidden = (await withArtifacts(shapes, { store }).invoke({
      id: 'c',
      name: 'shapes',
      args: {},
      type: 'tool_call',
    })) as ToolMessage;
    expect(typeof hidden.content).toBe('string');
    expect(hidden.content).toMatch(/PNG image .* stored as artifact shapes_[0-9a-f]{24}/);
    expect(hidden.content).not.toMatch(BASE64_RUN);
    // The same bytes twice: stored once.
    expect(hidden.artifact).toMatchObject({ mimeType: 'image/png', sizeBytes: png.length });
    const shown = (await withArtifacts(shapes, { store, config: { images: { inline: true, maxPerResult: 2 } } }).invoke(
      {
        id: 'c',
        name: 'shapes',
        args: {},
        type: 'tool_call',
      },
    )) as ToolMessage;
    const images = (shown.content as { type: string; data?: string }[]).filter((b) => b.type === 'image');
    expect(images).toEqual([
      { type: 'image', mimeType: 'image/png', data: b64 },
      { type: 'image', mimeType: 'image/png', data: b64 },
    ]);
  });

  it('refuses what is not a tool, a missing store and a bad config, at setup', () => {
    expect(() => withArtifacts(lookup, {} as never)).toThrow(/needs \{ store \}/);
    expect(() => withArtifacts({} as never, { store })).toThrow(/takes LangChain tools/);
    expect(() => withArtifacts(lookup, { store, config: { maxInlineChar: 5 } as never })).toThrow(
      /unknown key "maxInlineChar"/,
    );
    expect(() => withArtifacts(lookup, { store, guardrail: { maxObservationChars: 1 } })).toThrow(/guardrail/);
  });
});

describe('artifactTools', () => {
  it('the store offers what it can: the in-memory store has no views, so three tools; each answers as the MCP tools do', async () => {
    const store = createInMemoryArtifactStore();
    const tools = artifactTools(store);
    expect(tools.map((t) => t.name)).toEqual(['artifact_list', 'artifact_info', 'artifact_url']);
    const ref = await store.putText('hello', { filename: 'a.txt' });
    const info = tools.find((t) => t.name === 'artifact_info')!;
    const message = (await info.invoke({
      id: 'c',
      name: 'artifact_info',
      args: { id: ref.id },
      type: 'tool_call',
    })) as ToolMessage;
    expect(JSON.parse(String(message.content))).toMatchObject({ id: ref.id, filename: 'a.txt' });
    expect(message.artifact).toEqual(ref);
    const missing = (await info.invoke({
      id: 'c',
      name: 'artifact_info',
      args: { id: 'nope' },
      type: 'tool_call',
    })) as ToolMessage;
    expect(missing.content).toMatch(/^No artifact nope here/);
    // The JSON Schema is the model's and LangChain's check.
    await expect(info.invoke({} as never)).rejects.toThrow(/did not match expected schema/);
  });
});

describe('artifactSerializer', () => {
  const store = createInMemoryArtifactStore();
  const pngBytes = pngOf(40, 30, 3000);
  const b64 = pngBytes.toString('base64');
  const value = {
    standard: b64,
    unpadded: b64.replace(/=+$/, ''),
    url: pngBytes.toString('base64url'),
    dataUrl: `data:image/png;base64,${b64}`,
    // Not what an encoder writes (the last character's spare bits set): kept exactly, as text.
    odd: `${'QUJD'.repeat(100)}QR==`,
    wrapped: (b64.match(/.{1,76}/g) ?? []).join('\n'),
    text: 'lorem ipsum '.repeat(4000),
    lone: `${'x'.repeat(40_000)}\ud800`,
    bytes: new Uint8Array(pngBytes),
    small: 'c2hvcnQ=',
    nested: [{ type: 'image', mimeType: 'image/png', data: b64 }],
  };

  it('saves every shape as a ref and restores it exactly; refs mode gives lines and text blocks instead', async () => {
    const serde = artifactSerializer(new JsonPlusSerializer(), { store });
    const [type, saved] = await serde.dumpsTyped(value);
    expect(type).toBe('json');
    const text = new TextDecoder().decode(saved);
    // Only the string with a lone surrogate (not UTF-8) stays inline, and it holds no base64.
    expect(text.replace(/x{40000}\\ud800/, '')).not.toMatch(/[A-Za-z0-9+/_-]{256,}/);
    expect(text).not.toContain('lorem ipsum lorem');
    expect(await serde.loadsTyped(type, saved)).toEqual(value);
    // A fresh serializer (no cache) restores from the store alone.
    expect(await artifactSerializer(new JsonPlusSerializer(), { store }).loadsTyped(type, saved)).toEqual(value);

    const refs = (await artifactSerializer(new JsonPlusSerializer(), { store, restore: 'refs' }).loadsTyped(
      type,
      saved,
    )) as Record<string, unknown>;
    expect(refs.standard).toMatch(
      /^\[image\/png, \d\.\d KiB — in artifact checkpoint_[0-9a-f]{24}, saved as base64\]$/,
    );
    expect(refs.text).toMatch(/^\[text, 47 KiB — in artifact checkpoint_[0-9a-f]{24}\]$/);
    expect(refs.nested).toEqual([
      {
        type: 'text',
        text: `${String(refs.standard).slice(0, -'base64]'.length)}{"encoding":"base64","block":{"type":"image","mimeType":"image/png","data":null},"at":["data"]}]`,
      },
    ]);
    expect(refs.small).toBe('c2hvcnQ=');
  });

  it('a value that is bytes as a whole, and an artifact gone from the store', async () => {
    const serde = artifactSerializer(new JsonPlusSerializer(), { store });
    const [type, saved] = await serde.dumpsTyped(new Uint8Array(pngBytes));
    expect(type).toBe('json');
    expect(await serde.loadsTyped(type, saved)).toEqual(new Uint8Array(pngBytes));
    const marker = JSON.parse(new TextDecoder().decode(saved)) as { $artifact: { id: string } };
    await store.delete(marker.$artifact.id);
    const later = artifactSerializer(new JsonPlusSerializer(), { store });
    expect(await later.loadsTyped(type, saved)).toMatch(
      /^\[image\/png, \d\.\d KiB — artifact checkpoint_[0-9a-f]{24}, no longer in the store\]$/,
    );
  });

  it('refs mode: a line saved again is its value again, in any serializer (another process, a restart), bytes as a whole included', async () => {
    const [type, saved] = await artifactSerializer(new JsonPlusSerializer(), { store }).dumpsTyped(value);
    const lines = await artifactSerializer(new JsonPlusSerializer(), { store, restore: 'refs' }).loadsTyped(
      type,
      saved,
    );
    // Saved by a serializer that never loaded those lines: each goes back to its marker.
    const [type2, again] = await artifactSerializer(new JsonPlusSerializer(), { store, restore: 'refs' }).dumpsTyped(
      lines,
    );
    expect(new TextDecoder().decode(again)).not.toContain(' — in artifact ');
    expect(await artifactSerializer(new JsonPlusSerializer(), { store }).loadsTyped(type2, again)).toEqual(value);

    // A value that is bytes as a whole loads as a line, and is bytes again once saved.
    const [rawType, raw] = await artifactSerializer(new JsonPlusSerializer(), { store }).dumpsTyped(
      new Uint8Array(pngBytes),
    );
    const line = await artifactSerializer(new JsonPlusSerializer(), { store, restore: 'refs' }).loadsTyped(
      rawType,
      raw,
    );
    expect(line).toMatch(/, saved as raw\]$/);
    const [lineType, lineSaved] = await artifactSerializer(new JsonPlusSerializer(), {
      store,
      restore: 'refs',
    }).dumpsTyped(line);
    expect(await artifactSerializer(new JsonPlusSerializer(), { store }).loadsTyped(lineType, lineSaved)).toEqual(
      new Uint8Array(pngBytes),
    );
    // Nested in a checkpoint, it is saved as LangGraph writes bytes there.
    const [nestedType, nested] = await artifactSerializer(new JsonPlusSerializer(), { store }).dumpsTyped({
      kept: line,
    });
    expect(await artifactSerializer(new JsonPlusSerializer(), { store }).loadsTyped(nestedType, nested)).toEqual({
      kept: new Uint8Array(pngBytes),
    });
    // A line whose artifact is not in the store stays the text it is.
    const stray = { note: '[image/png, 3.0 KiB — in artifact checkpoint_000000000000000000000000, saved as base64]' };
    const [strayType, straySaved] = await artifactSerializer(new JsonPlusSerializer(), { store }).dumpsTyped(stray);
    expect(await artifactSerializer(new JsonPlusSerializer(), { store }).loadsTyped(strayType, straySaved)).toEqual(
      stray,
    );
  });

  it('a thread saved again keeps its artifacts alive: under half the ttl left, they are put again, lines included', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const T = Date.now();
      const inner = createInMemoryArtifactStore();
      let puts = 0;
      const counting = new Proxy(inner, {
        get(target, key, receiver) {
          if (key === 'putBytes' || key === 'putText')
            return (...args: unknown[]) => {
              puts++;
              return (target[key] as (...a: unknown[]) => unknown)(...args);
            };
          return Reflect.get(target, key, receiver);
        },
      });
      const ttl = 1000;
      const doc = { shot: b64 };
      const saving = artifactSerializer(new JsonPlusSerializer(), { store: counting, ttl });
      const [type, saved] = await saving.dumpsTyped(doc);
      expect(puts).toBe(1);
      const id = (JSON.parse(new TextDecoder().decode(saved)) as { shot: { $artifact: { id: string } } }).shot.$artifact
        .id;
      const expiry = async () => Date.parse((await inner.getRef(id))!.expiresAt!);
      expect(await expiry()).toBe(T + ttl * 1000);

      vi.setSystemTime(T + 100_000);
      await saving.dumpsTyped(doc);
      expect(puts).toBe(1); // Over half its life left: the marker is written again, nothing uploaded.

      // Past half its life: a line loaded in 'refs' mode, saved again, puts the artifact again.
      vi.setSystemTime(T + 600_000);
      const refs = artifactSerializer(new JsonPlusSerializer(), { store: counting, restore: 'refs', ttl });
      const lines = await refs.loadsTyped(type, saved);
      await refs.dumpsTyped(lines);
      expect(puts).toBe(2);
      expect(await expiry()).toBe(T + 600_000 + ttl * 1000);

      // And a value saved before, saved again, too.
      await saving.dumpsTyped(doc);
      expect(puts).toBe(3);
      vi.setSystemTime(T + 1_500_000);
      expect(await inner.exists(id)).toBe(true); // Past the first save's ttl, still there.
    } finally {
      vi.useRealTimers();
    }
  });

  it('uploads at most 8 payloads of a checkpoint at a time', async () => {
    const inner = createInMemoryArtifactStore();
    let inFlight = 0;
    let most = 0;
    const slow = new Proxy(inner, {
      get(target, key, receiver) {
        if (key === 'putBytes' || key === 'putText')
          return async (...args: unknown[]) => {
            most = Math.max(most, ++inFlight);
            await new Promise((r) => setTimeout(r, 5));
            try {
              return await (target[key] as (...a: unknown[]) => Promise<unknown>)(...args);
            } finally {
              inFlight--;
            }
          };
        return Reflect.get(target, key, receiver);
      },
    });
    const many = Object.fromEntries(
      Array.from({ length: 30 }, (_, i) => [`p${i}`, pngOf(20 + i, 20, 500).toString('base64')]),
    );
    const serde = artifactSerializer(new JsonPlusSerializer(), { store: slow });
    const [type, saved] = await serde.dumpsTyped(many);
    expect(most).toBe(8);
    expect(await artifactSerializer(new JsonPlusSerializer(), { store: slow }).loadsTyped(type, saved)).toEqual(many);
  });

  it('refuses a store that keeps nothing, a saver wrapped twice, and bad options', () => {
    expect(() => artifactSerializer(new JsonPlusSerializer(), { store: createNoOpArtifactStore() })).toThrow(
      /keeps nothing/,
    );
    const saver = withArtifactCheckpoints(new MemorySaver(), { store });
    expect(() => withArtifactCheckpoints(saver, { store })).toThrow(/already/);
    expect(() => artifactSerializer(new JsonPlusSerializer(), { store, restore: 'all' as never })).toThrow(/restore/);
    expect(() => artifactSerializer(new JsonPlusSerializer(), { store, minBase64Chars: 2 })).toThrow(/minBase64Chars/);
  });
});

describe('examples/langchain.ts', () => {
  let dir: string;
  let server: RunningServer;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'langchain-example-'));
    server = await startServer(loadConfig({}, { port: 0, dataDir: dir, logLevel: 'silent', env: 'development' }));
  });
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs the agent of docs/langchain.md against the service: refs for the model and in the checkpoints, a link that downloads the PDF', async () => {
    const out = await runExample('langchain.ts', {
      ARTIFACT_STORE_URL: server.url,
      ARTIFACT_STORE_TOKEN: server.token,
    });
    expect(out).toMatch(
      /^the tool returned \d+ chars of base64; the model read: .*stored as artifact download_report_[0-9a-f]{24}/m,
    );
    const [, id, sha] =
      /^artifact: (download_report_[0-9a-f]{24}) \(application\/pdf, \d+ bytes, sha256 ([0-9a-f]{64})\)$/m.exec(out)!;
    expect(out).toMatch(/^the screenshot reached the model as: text, image, text$/m);
    expect(out).toMatch(/^base64 in the second turn's prompt: none$/m);
    expect(out).toMatch(/^checkpoints: [1-9]\d* refs, base64 runs: none$/m);
    const link = /^link: (http:\/\/127\.0\.0\.1:\d+\/\S+)$/m.exec(out)![1]!;
    expect(link).toContain(id);
    // A browser needs no token for it, and gets the PDF the tool returned.
    const res = await fetch(link);
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    expect(sha256(bytes)).toBe(sha);
  }, 90_000);
});

describe('the entry point', () => {
  it('loads @langchain/core, and neither LangGraph (its checkpoint package is types only) nor the MCP SDK', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'langchain-imports-'));
    try {
      const file = join(dir, 'imports.txt');
      const entry = pathToFileURL(join(ROOT, 'src', 'langchain', 'index.ts')).href;
      const recorder = pathToFileURL(join(ROOT, 'test', 'helpers', 'record-imports.mjs')).href;
      await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', '--import', recorder, '-e', `await import(${JSON.stringify(entry)})`],
        { cwd: ROOT, env: { ...process.env, RECORD_IMPORTS: file }, timeout: 60_000 },
      );
      const loaded = await readFile(file, 'utf8');
      expect(loaded).toContain('node_modules/@langchain/core/');
      expect(loaded).not.toMatch(/node_modules\/(@modelcontextprotocol|@langchain\/langgraph)/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
