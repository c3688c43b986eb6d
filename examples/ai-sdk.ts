/**
 * A Vercel AI SDK agent whose tool results live in artifact-store: a tool downloads a 60-page report
 * as a PDF in base64 (the Tableau incident's shape), another takes a screenshot, and the app saves
 * the turn's messages and runs a second turn from them. The script prints what the history holds and
 * what the model received, and a download link for the PDF.
 * The model is the AI SDK's scripted test model, so no LLM and no key are needed.
 *
 *   npm start                      # in another terminal: prints ARTIFACT_STORE_TOKEN
 *   export ARTIFACT_STORE_TOKEN=…
 *   npx tsx examples/ai-sdk.ts
 *
 * ARTIFACT_STORE_URL names another service (default http://127.0.0.1:8787). In your own project the
 * imports are `artifact-store-sdk/ai-sdk` and `artifact-store-sdk`; this file imports the source so it
 * runs from a clone.
 */
import { generateText, type ModelMessage, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { z } from 'zod';
import { artifactMiddleware, artifactTools, withArtifacts } from '../src/ai-sdk/index.js';
import { createHttpArtifactStore } from '../src/client/index.js';

/** The report a BI server exports: 60 pages of figures. */
async function reportPdf(): Promise<string> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let p = 1; p <= 60; p++) {
    const page = doc.addPage([612, 792]);
    page.drawText(`Quarterly sales, page ${p} of 60`, { x: 40, y: 750, size: 16, font });
    for (let row = 0; row < 50; row++)
      page.drawText(`Region ${row + 1}: ${(row * 7919 + p * 104_729) % 100_000} units`, {
        x: 40,
        y: 720 - row * 13,
        size: 9,
        font,
      });
  }
  return Buffer.from(await doc.save()).toString('base64');
}

/** A 1×1 PNG: what a browser tool's screenshot would be. */
const SCREENSHOT = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

const myTools = {
  download_report: tool({
    description: 'Download the quarterly sales report as PDF',
    inputSchema: z.object({ quarter: z.string() }),
    execute: async ({ quarter }) => ({ quarter, format: 'pdf', content: await reportPdf() }),
  }),
  screenshot: tool({
    description: 'Take a screenshot of the sales dashboard',
    inputSchema: z.object({}),
    // An MCP image block: a tool returns one to have its image shown to the model.
    execute: async () => ({ type: 'image', data: SCREENSHOT, mimeType: 'image/png' }),
  }),
};

/** The model: calls both tools, answers, then answers the second turn. A real app names its provider's model. */
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const script = [
  [
    { type: 'tool-call' as const, toolCallId: 'c1', toolName: 'download_report', input: '{"quarter":"2026-Q3"}' },
    { type: 'tool-call' as const, toolCallId: 'c2', toolName: 'screenshot', input: '{}' },
  ],
  [{ type: 'text' as const, text: 'The report is stored and the dashboard is on screen.' }],
  [{ type: 'text' as const, text: 'Page 2 holds the regional figures.' }],
];
const received: unknown[] = [];
const yourModel = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    received.push(prompt);
    const content = script.shift()!;
    const unified = content[0]!.type === 'tool-call' ? 'tool-calls' : 'stop';
    return { content, finishReason: { unified, raw: unified }, usage, warnings: [] };
  },
});

// #region setup
const store = createHttpArtifactStore({
  baseUrl: process.env.ARTIFACT_STORE_URL ?? 'http://127.0.0.1:8787',
  token: process.env.ARTIFACT_STORE_TOKEN,
});
const model = wrapLanguageModel({ model: yourModel, middleware: artifactMiddleware({ store }) });
const tools = {
  ...withArtifacts(myTools, {
    store,
    config: { viewTools: true, tools: { screenshot: { images: { inline: true } } } },
  }),
  ...artifactTools(store), // artifact_read, artifact_search, … for the model to read the PDF back
};
// #endregion

// #region turns
const first = await generateText({ model, tools, stopWhen: stepCountIs(5), prompt: 'Get the Q3 report' });
const history: ModelMessage[] = [{ role: 'user', content: 'Get the Q3 report' }, ...first.response.messages];
const saved = JSON.stringify(history); // what the app writes to its database
await generateText({
  model,
  tools,
  messages: [...JSON.parse(saved), { role: 'user', content: 'What is on page 2?' }],
});
// #endregion

const base64Run = /[A-Za-z0-9+/]{256,}/;
const pdfResult = first.steps[0]!.toolResults.find((r) => r.toolName === 'download_report')!;
const ref = (pdfResult.output as { content: { artifact: { id: string; sizeBytes: number } } }).content.artifact;
console.log(`the saved history: ${saved.length} characters, base64 in it: ${base64Run.test(saved) ? 'yes' : 'none'}`);
console.log(`the PDF: artifact ${ref.id}, ${ref.sizeBytes} bytes`);
const turn2 = received.at(-1) as {
  role: string;
  content: { type: string; output?: { type: string; value: unknown } }[];
}[];
const images = turn2
  .flatMap((m) => (m.role === 'tool' ? m.content : []))
  .flatMap((p) => (p.output?.type === 'content' ? (p.output.value as { type: string; mediaType?: string }[]) : []))
  .filter((v) => v.type === 'image-data');
console.log(`the second turn's prompt: images ${images.map((i) => i.mediaType).join(', ')}`);
const link = await store.url!(ref.id);
console.log(`download link: ${link.url}`);
