/**
 * A LangGraph agent whose tool results and checkpoints keep their bytes in artifact-store. One tool
 * returns a 40-page PDF as base64 inside JSON (as Tableau's does), another a screenshot. withArtifacts
 * turns their results into a short line for the model plus the ArtifactRef as the ToolMessage's
 * artifact; the screenshot reaches the model as an image block; the checkpointer saves refs, not base64.
 * On the second turn the model asks for a link with the read-back tool artifact_url.
 * The model is scripted (it calls the tools, then answers), so no LLM and no key are needed.
 *
 *   npm start                      # in another terminal: prints ARTIFACT_STORE_TOKEN
 *   export ARTIFACT_STORE_TOKEN=…
 *   npx tsx examples/langchain.ts
 *
 * ARTIFACT_STORE_URL names another service (default http://127.0.0.1:8787). In your own project the
 * imports are `artifact-store-sdk/langchain` and `artifact-store-sdk`; this file imports the source so
 * it runs from a clone.
 */
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import { MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { crc32, deflateSync } from 'node:zlib';
import { z } from 'zod';
import { createHttpArtifactStore } from '../src/client/index.js';
import type { ArtifactRef } from '../src/core/schemas.js';
import { artifactTools, withArtifactCheckpoints, withArtifacts } from '../src/langchain/index.js';

/** A 40-page PDF, what the report tool downloads. */
async function salesReport(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= 40; i++)
    doc.addPage([600, 400]).drawText(`Sales Dashboard, page ${i} of 40`, { x: 40, y: 340, size: 18, font });
  return doc.save();
}
const REPORT = Buffer.from(await salesReport()).toString('base64');
/** A 320×200 PNG of noise: what the screenshot tool captures (about 190 KiB). */
function screenshot(): string {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const head = Buffer.alloc(4);
    head.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([head, body, crc]);
  };
  const [width, height] = [320, 200];
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2], 8); // 8-bit RGB
  const pixels = Buffer.alloc((1 + width * 3) * height);
  let seed = 7;
  for (let i = 0; i < pixels.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 8;
    if (i % (1 + width * 3) !== 0) pixels[i] = seed & 0xff; // each row starts with its filter byte, 0
  }
  const png = [
    Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(pixels)),
    chunk('IEND', Buffer.alloc(0)),
  ];
  return Buffer.concat(png).toString('base64');
}
const SCREENSHOT = screenshot();

// The app's tools, as they are.
const downloadReport = tool(async ({ title }) => JSON.stringify({ name: title, format: 'pdf', content: REPORT }), {
  name: 'download_report',
  description: 'Downloads a dashboard as a PDF.',
  schema: z.object({ title: z.string() }),
});
const takeScreenshot = tool(
  async ({ url }) => [
    { type: 'text', text: `Screenshot of ${url}` },
    { type: 'image', mimeType: 'image/png', data: SCREENSHOT },
  ],
  { name: 'take_screenshot', description: 'Takes a screenshot of a page.', schema: z.object({ url: z.string() }) },
);

/** The model: calls both tools, answers; on the second turn asks for a link to the PDF. A real app names a chat model. */
class ScriptedModel extends BaseChatModel {
  readonly prompts: BaseMessage[][] = [];
  _llmType() {
    return 'scripted';
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.prompts.push(messages);
    const pdf = messages.find((m) => ToolMessage.isInstance(m) && m.name === 'download_report') as ToolMessage;
    const script = [
      () =>
        new AIMessage({
          content: '',
          tool_calls: [
            { id: 'c1', name: 'download_report', args: { title: 'Sales Dashboard' } },
            { id: 'c2', name: 'take_screenshot', args: { url: 'https://dash.example/sales' } },
          ],
        }),
      () => new AIMessage('Here are the report and the dashboard.'),
      () =>
        new AIMessage({
          content: '',
          tool_calls: [{ id: 'c3', name: 'artifact_url', args: { id: (pdf.artifact as ArtifactRef).id } }],
        }),
      () => new AIMessage('The link is above.'),
    ];
    const message = script[this.prompts.length - 1]!();
    return { generations: [{ message, text: '' }] };
  }
}
const model = new ScriptedModel({});

// #region setup
const store = createHttpArtifactStore({
  baseUrl: process.env.ARTIFACT_STORE_URL ?? 'http://127.0.0.1:8787',
  token: process.env.ARTIFACT_STORE_TOKEN,
  scope: { sessionId: 'thread-1' }, // where this thread's artifacts go
});
// The screenshot is for the model to see: the image policy keeps it inline (docs/mcp.md).
const config = { tools: { take_screenshot: { images: { inline: true } } } };
const tools = [...withArtifacts([downloadReport, takeScreenshot], { store, config }), ...artifactTools(store)];
const checkpointer = withArtifactCheckpoints(new MemorySaver(), { store, restore: 'refs', ttl: 7 * 24 * 3600 });
// #endregion

// #region graph
const agent = new StateGraph(MessagesAnnotation)
  .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
  .addNode('tools', new ToolNode(tools))
  .addEdge(START, 'agent')
  .addConditionalEdges('agent', toolsCondition)
  .addEdge('tools', 'agent')
  .compile({ checkpointer });

const thread = { configurable: { thread_id: 'thread-1' } };
await agent.invoke({ messages: [new HumanMessage('Get me the sales report and a screenshot.')] }, thread);
await agent.invoke({ messages: [new HumanMessage('Send me a link to the PDF.')] }, thread);
// #endregion

const toolMessage = (messages: BaseMessage[], name: string) =>
  messages.find((m) => ToolMessage.isInstance(m) && m.name === name) as ToolMessage;
const base64Run = /[A-Za-z0-9+/]{256,}/;
const [, afterTools, secondTurn, last] = model.prompts as [BaseMessage[], BaseMessage[], BaseMessage[], BaseMessage[]];
const pdf = toolMessage(afterTools, 'download_report');
const ref = pdf.artifact as ArtifactRef;
console.log(`the tool returned ${REPORT.length} chars of base64; the model read: ${pdf.content}`);
console.log(`artifact: ${ref.id} (${ref.mimeType}, ${ref.sizeBytes} bytes, sha256 ${ref.sha256})`);
const shot = toolMessage(afterTools, 'take_screenshot').content as { type: string }[];
console.log(`the screenshot reached the model as: ${shot.map((b) => b.type).join(', ')}`);
console.log(`base64 in the second turn's prompt: ${base64Run.test(JSON.stringify(secondTurn)) ? 'yes' : 'none'}`);
console.log(`link: ${/https?:\/\/\S+/.exec(String(toolMessage(last, 'artifact_url').content))?.[0]}`);

// What the checkpointer saved: markers where the bytes were.
const saved = Object.values(checkpointer.storage['thread-1']![''] ?? {})
  .map(([checkpoint]) => new TextDecoder().decode(checkpoint))
  .join('\n');
console.log(
  `checkpoints: ${saved.split('"$artifact"').length - 1} refs, base64 runs: ${base64Run.test(saved) ? 'yes' : 'none'}`,
);
