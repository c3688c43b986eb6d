/**
 * artifact-store-sdk/langchain with the real packages from npm (@langchain/core, @langchain/langgraph)
 * and a scripted chat model (no network, no key) that records every prompt it receives. A LangGraph
 * agent (StateGraph + ToolNode + a MemorySaver checkpointer) calls a tool that returns a 2 MiB PDF as
 * base64 inside JSON and a tool that returns a screenshot, answers, then takes a second turn, against
 * the service over HTTP. Also: what a throwing tool and a store that refuses (quota) do, the
 * serializer's round trip of every shape it stores, and examples/langchain.ts, the doc's example.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import { MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { JsonPlusSerializer } from '@langchain/langgraph-checkpoint';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ArtifactStore } from '../src/client/artifact-store.js';
import { createHttpArtifactStore, createInMemoryArtifactStore, createNoOpArtifactStore } from '../src/client/index.js';
import { loadConfig } from '../src/core/config.js';
import type { ArtifactRef } from '../src/core/schemas.js';
import { artifactSerializer, artifactTools, withArtifactCheckpoints, withArtifacts } from '../src/langchain/index.js';
import { type RunningServer, startServer } from '../src/node.js';
import { runExample } from './doc-blocks.js';
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
        text: expect.stringMatching(/^\[image\/png, 117(\.\d)? KiB — in artifact checkpoint_[0-9a-f]{24}\]$/),
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
