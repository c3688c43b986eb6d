/**
 * A Google ADK agent whose artifacts live in artifact-store: ADK's Runner gets
 * ArtifactStoreArtifactService as its artifactService, a tool saves a chart through its context
 * (twice: versions 0 and 1) and a user-wide note, and the script then reads what the service holds.
 * The model is scripted (it calls the tool, then answers), so no LLM and no key are needed.
 *
 *   npm start                      # in another terminal: prints ARTIFACT_STORE_TOKEN
 *   export ARTIFACT_STORE_TOKEN=…
 *   npx tsx examples/adk.ts
 *
 * The token npm start prints is bound to the user "dev" (its `sub`), so the agent's user here is dev:
 * a token bound to a user serves ADK's calls for that user, in any of its sessions, and is refused
 * (forbidden) for any other. An app that serves many users mints a tenant-wide token (no `sub`:
 * `artifact-store token --sub ''`), with which every userId works, or one token per user.
 *
 * ARTIFACT_STORE_URL names another service (default http://127.0.0.1:8787). In your own project the
 * imports are `artifact-store-sdk/adk` and `artifact-store-sdk`; this file imports the source so it
 * runs from a clone.
 */
import {
  BaseLlm,
  type BaseLlmConnection,
  FunctionTool,
  InMemorySessionService,
  type LlmRequest,
  type LlmResponse,
  LlmAgent,
  LogLevel,
  Runner,
  setLogLevel,
} from '@google/adk';
import { z } from 'zod';
import { ArtifactStoreArtifactService } from '../src/adk/index.js';
import { createHttpArtifactStore } from '../src/client/index.js';

setLogLevel(LogLevel.ERROR);

/** A 1×1 PNG: what a charting tool would draw. */
const CHART_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** The model: asks for the chart, then says what the tool answered. A real app names a Gemini model. */
class ScriptedModel extends BaseLlm {
  constructor() {
    super({ model: 'scripted' });
  }
  async *generateContentAsync(request: LlmRequest): AsyncGenerator<LlmResponse, void> {
    const answered = request.contents.at(-1)?.parts?.find((p) => p.functionResponse)?.functionResponse;
    yield answered
      ? { content: { role: 'model', parts: [{ text: `Saved: ${JSON.stringify(answered.response)}` }] } }
      : { content: { role: 'model', parts: [{ functionCall: { name: 'save_chart', args: { city: 'Lisbon' } } }] } };
  }
  async connect(): Promise<BaseLlmConnection> {
    throw new Error('no live connection');
  }
}

const saveChart = new FunctionTool({
  name: 'save_chart',
  description: 'Draws the weather chart of a city and keeps it as the artifact chart.png.',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }, context) => {
    const version = await context!.saveArtifact('chart.png', {
      inlineData: { data: CHART_PNG, mimeType: 'image/png' },
    });
    await context!.saveArtifact('user:itinerary.txt', { text: `Trip to ${city}` }); // user-wide
    return { version };
  },
});
const agent = new LlmAgent({ name: 'planner', model: new ScriptedModel(), tools: [saveChart] });

// #region setup
const store = createHttpArtifactStore({
  baseUrl: process.env.ARTIFACT_STORE_URL ?? 'http://127.0.0.1:8787',
  token: process.env.ARTIFACT_STORE_TOKEN, // tenant-wide, or bound to the one user the Runner acts for
});
const artifactService = new ArtifactStoreArtifactService(store);
const sessionService = new InMemorySessionService();
const runner = new Runner({ appName: 'travel_agent', agent, sessionService, artifactService });
// #endregion

const USER = 'dev'; // the user npm start's token is bound to; a tenant-wide token may name any
const where = { appName: 'travel_agent', userId: USER };
for (const sessionId of ['s-1', 's-2']) await sessionService.createSession({ ...where, sessionId });

const saved: number[] = [];
for (let turn = 0; turn < 2; turn++) {
  const newMessage = { role: 'user', parts: [{ text: 'Chart the weather in Lisbon.' }] };
  for await (const event of runner.runAsync({ userId: USER, sessionId: 's-1', newMessage })) {
    if (event.errorCode) throw new Error(`${event.errorCode}: ${event.errorMessage}`);
    for (const part of event.content?.parts ?? []) {
      const answer = part.functionResponse;
      if (!answer) continue;
      // ADK hands a tool's error to the model as { error } rather than throwing it: stop here instead.
      if (answer.response?.error) throw new Error(String(answer.response.error));
      saved.push((answer.response as { version: number }).version);
    }
  }
}
console.log(`the tool saved chart.png as version ${saved[0]}, then version ${saved[1]}`);

// What the service holds: ADK's own calls, then the store's.
const chart = { ...where, sessionId: 's-1', filename: 'chart.png' };
const versions = await artifactService.listArtifactVersions(chart);
const latest = versions.at(-1)!;
const bytes = (await store.names!.loadVersion({
  app: 'travel_agent',
  name: 'chart.png',
  userId: USER,
  sessionId: 's-1',
}))!.bytes;
console.log(
  `in the store: chart.png versions ${versions.map((v) => v.version)}, ${latest.mimeType}, ${bytes.byteLength} bytes, ${latest.canonicalUri}`,
);
console.log(`session s-2 sees: ${(await artifactService.listArtifactKeys({ ...where, sessionId: 's-2' })).join(', ')}`);
const link = await artifactService.versionUrl(chart, { expiresIn: 600 });
console.log(`download link: ${link.url} (${link.mimeType})`);
