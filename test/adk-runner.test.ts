/**
 * A real ADK app on our artifact service: `@google/adk`'s Runner runs an LlmAgent whose model is
 * scripted (no network, no key) to call a FunctionTool, then answer. The tool saves and loads
 * artifacts through `toolContext` (a 5 MiB PDF among them), and the test reads what landed straight
 * from the ArtifactStore: the bytes, the version numbers, and which session sees which name.
 * It also runs examples/adk.ts, the doc's setup, against a real service.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  BaseLlm,
  type BaseLlmConnection,
  type Context,
  type Event,
  FunctionTool,
  InMemorySessionService,
  type LlmRequest,
  type LlmResponse,
  LlmAgent,
  LogLevel,
  Runner,
  setLogLevel,
} from '@google/adk';
import type { Part } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ArtifactStoreArtifactService } from '../src/adk/index.js';
import type { ArtifactStore } from '../src/client/artifact-store.js';
import { createHttpArtifactStore, createInMemoryArtifactStore } from '../src/client/index.js';
import { loadConfig } from '../src/core/config.js';
import { startServer, type RunningServer } from '../src/node.js';
import { ROOT, runExample } from './doc-blocks.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { CLI_ARGS } from './helpers/cli-server.js';
import { pdf } from './helpers/payloads.js';

setLogLevel(LogLevel.ERROR);

const APP = 'report_agent';
const USER = 'alice';
const FIVE_MIB = 5 * 1024 * 1024;
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** A real PDF (pdf-lib), padded to exactly 5 MiB with a trailing comment line of varied bytes. */
async function pdfOf5MiB(title: string): Promise<Buffer> {
  const doc = await pdf(20, title);
  const pad = Buffer.alloc(FIVE_MIB - doc.length);
  pad[0] = 0x0a;
  pad[1] = 0x25; // '%'
  for (let i = 2; i < pad.length; i++) pad[i] = 0x20 + ((i * 2654435761) >>> 25);
  return Buffer.concat([doc, pad]);
}

/**
 * The model: the user's message is `{ tool, args }` as JSON, and the model calls that tool; once the
 * tool answered, it says what the tool returned. What it was asked is recorded.
 */
class ScriptedLlm extends BaseLlm {
  readonly requests: LlmRequest[] = [];
  constructor() {
    super({ model: 'scripted' });
  }
  async *generateContentAsync(request: LlmRequest): AsyncGenerator<LlmResponse, void> {
    this.requests.push(request);
    const last = request.contents[request.contents.length - 1]!;
    const answered = last.parts?.find((p) => p.functionResponse)?.functionResponse;
    if (answered) {
      yield { content: { role: 'model', parts: [{ text: `done: ${JSON.stringify(answered.response)}` }] } };
      return;
    }
    const asked = JSON.parse(last.parts!.find((p) => p.text)!.text!) as { tool: string; args: Record<string, unknown> };
    yield {
      content: { role: 'model', parts: [{ functionCall: { id: 'call-1', name: asked.tool, args: asked.args } }] },
    };
  }
  async connect(): Promise<BaseLlmConnection> {
    throw new Error('the scripted model has no live connection');
  }
}

/** The reports the tool saves, by title (each a 5 MiB PDF). */
const reports = new Map<string, Buffer>();

const saveReport = new FunctionTool({
  name: 'save_report',
  description: 'Renders a report as PDF and keeps it as the artifact report.pdf; remembers a preference user-wide.',
  parameters: z.object({ title: z.string(), preference: z.string() }),
  execute: async ({ title, preference }, toolContext?: Context) => {
    const bytes = reports.get(title)!;
    const version = await toolContext!.saveArtifact('report.pdf', {
      inlineData: { data: bytes.toString('base64'), mimeType: 'application/pdf' },
    });
    const prefVersion = await toolContext!.saveArtifact('user:preferences.txt', { text: preference });
    return { version, prefVersion };
  },
});

const loadArtifact = new FunctionTool({
  name: 'load_artifact',
  description: 'Loads an artifact of this session (or a user: one) and lists the ones it can see.',
  parameters: z.object({ filename: z.string(), version: z.number().optional() }),
  execute: async ({ filename, version }, toolContext?: Context) => {
    const part: Part | undefined = await toolContext!.loadArtifact(filename, version);
    const keys = await toolContext!.listArtifacts();
    if (!part) return { found: false, keys };
    const bytes = part.inlineData ? Buffer.from(part.inlineData.data!, 'base64') : undefined;
    return {
      found: true,
      keys,
      ...(part.text !== undefined ? { text: part.text } : {}),
      ...(bytes ? { mimeType: part.inlineData!.mimeType, sizeBytes: bytes.length, sha256: sha256(bytes) } : {}),
    };
  },
});

interface Harness {
  store: ArtifactStore;
  close?: () => Promise<void>;
}

const backends: [string, () => Promise<Harness>][] = [
  ['the in-memory store', async () => ({ store: createInMemoryArtifactStore() })],
  [
    'the HTTP store (the service in-process, a tenant-wide token)',
    async () => {
      // The test app caps artifacts at 1 MiB; the service's default (and this test's PDF) is larger.
      const t: TestApp = await createTestApp({ limits: { maxArtifactBytes: 16 * 1024 * 1024 } });
      const token = await t.token({ tenant: 'adk-runner', perms: ['read', 'write'] });
      const store = createHttpArtifactStore({
        baseUrl: 'http://artifact-store.test',
        token,
        fetch: (input, init) => Promise.resolve(t.app.request(input instanceof Request ? input : String(input), init)),
      });
      return { store, close: () => t.cleanup() };
    },
  ],
];

describe.each(backends)('an ADK Runner keeps its artifacts in %s', (_name, open) => {
  let harness: Harness;
  let runner: Runner;
  let model: ScriptedLlm;
  const sessions = new InMemorySessionService();

  beforeAll(async () => {
    harness = await open();
    model = new ScriptedLlm();
    runner = new Runner({
      appName: APP,
      agent: new LlmAgent({ name: 'reporter', model, tools: [saveReport, loadArtifact] }),
      sessionService: sessions,
      artifactService: new ArtifactStoreArtifactService(harness.store),
    });
    for (const title of ['Q3 sales', 'Q3 sales, revised'])
      if (!reports.has(title)) reports.set(title, await pdfOf5MiB(title));
    for (const sessionId of ['A', 'B']) await sessions.createSession({ appName: APP, userId: USER, sessionId });
  }, 120_000);
  afterAll(async () => {
    await harness?.close?.();
  });

  /** One turn: the events, the tool's answer and the model's final text. */
  async function turn(sessionId: string, tool: string, args: object) {
    const events: Event[] = [];
    for await (const event of runner.runAsync({
      userId: USER,
      sessionId,
      newMessage: { role: 'user', parts: [{ text: JSON.stringify({ tool, args }) }] },
    })) {
      if (event.errorCode) throw new Error(`the run failed: ${event.errorCode} ${event.errorMessage}`);
      events.push(event);
    }
    const response = events.flatMap((e) => e.content?.parts ?? []).find((p) => p.functionResponse)?.functionResponse
      ?.response as Record<string, unknown> | undefined;
    const text = events
      .flatMap((e) => e.content?.parts ?? [])
      .filter((p) => p.text)
      .map((p) => p.text)
      .join('');
    return { events, response, text };
  }

  const names = () => harness.store.names!;
  const inSession = (sessionId: string, name = 'report.pdf') => ({ app: APP, name, userId: USER, sessionId });

  it('a tool saves a 5 MiB PDF through toolContext: the bytes land in the store, identical', async () => {
    const first = reports.get('Q3 sales')!;
    const { events, response, text } = await turn('A', 'save_report', { title: 'Q3 sales', preference: 'EUR' });
    expect(response).toEqual({ version: 0, prefVersion: 0 });
    expect(text).toBe('done: {"version":0,"prefVersion":0}');
    // ADK records what the tool saved in the event's artifactDelta.
    expect(events.some((e) => e.actions?.artifactDelta?.['report.pdf'] === 0)).toBe(true);

    const loaded = await names().loadVersion(inSession('A'), 0);
    expect(loaded!.bytes.byteLength).toBe(FIVE_MIB);
    expect(sha256(loaded!.bytes)).toBe(sha256(first));
    expect(Buffer.from(loaded!.bytes).equals(first)).toBe(true);
    expect(loaded!.ref).toMatchObject({
      name: 'report.pdf',
      version: 0,
      mimeType: 'application/pdf',
      sizeBytes: FIVE_MIB,
    });
    expect(loaded!.ref.scope).toMatchObject({ userId: USER, sessionId: 'A' });
    // Never base64 in the store: the stored size is the PDF's, not its base64's.
    expect(loaded!.ref.sizeBytes).toBeLessThan(first.toString('base64').length);
    // The model saw the tool's small answer, never the PDF.
    expect(JSON.stringify(model.requests.map((r) => r.contents))).not.toContain(
      first.subarray(0, 64).toString('base64'),
    );
  }, 120_000);

  it('a second save is version 1; both versions stay readable', async () => {
    const revised = reports.get('Q3 sales, revised')!;
    const { response } = await turn('A', 'save_report', { title: 'Q3 sales, revised', preference: 'USD' });
    expect(response).toEqual({ version: 1, prefVersion: 1 });
    const versions = await names().listVersions(inSession('A'));
    expect(versions.map((v) => v.version)).toEqual([0, 1]);
    expect(sha256((await names().loadVersion(inSession('A'), 1))!.bytes)).toBe(sha256(revised));
    expect(sha256((await names().loadVersion(inSession('A')))!.bytes)).toBe(sha256(revised));
    expect(sha256((await names().loadVersion(inSession('A'), 0))!.bytes)).toBe(sha256(reports.get('Q3 sales')!));

    // Through the tool: the latest, and version 0 by number.
    const latest = await turn('A', 'load_artifact', { filename: 'report.pdf' });
    expect(latest.response).toMatchObject({
      found: true,
      mimeType: 'application/pdf',
      sizeBytes: FIVE_MIB,
      sha256: sha256(revised),
    });
    const v0 = await turn('A', 'load_artifact', { filename: 'report.pdf', version: 0 });
    expect(v0.response).toMatchObject({ found: true, sha256: sha256(reports.get('Q3 sales')!) });
  }, 120_000);

  it('a user: name saved in session A is seen from session B; the session name is not', async () => {
    const pref = await turn('B', 'load_artifact', { filename: 'user:preferences.txt' });
    expect(pref.response).toEqual({ found: true, keys: ['user:preferences.txt'], text: 'USD' });
    const first = await turn('B', 'load_artifact', { filename: 'user:preferences.txt', version: 0 });
    expect(first.response).toMatchObject({ found: true, text: 'EUR' });
    const report = await turn('B', 'load_artifact', { filename: 'report.pdf' });
    expect(report.response).toEqual({ found: false, keys: ['user:preferences.txt'] });
    // Session A sees both; in the store, the user: name is user-wide (no session) and keeps its prefix.
    const inA = await turn('A', 'load_artifact', { filename: 'missing.txt' });
    expect(inA.response).toEqual({ found: false, keys: ['report.pdf', 'user:preferences.txt'] });
    const userWide = await names().listNames({ app: APP, userId: USER, userWide: true });
    expect(userWide.items.map((i) => [i.name, i.scope, i.versions])).toEqual([['user:preferences.txt', 'user', 2]]);
    const sessionB = await names().listNames({ app: APP, userId: USER, sessionId: 'B' });
    expect(sessionB.items).toEqual([]);
  }, 120_000);
});

describe('examples/adk.ts', () => {
  let server: RunningServer;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'adk-example-'));
    server = await startServer(loadConfig({}, { port: 0, dataDir: dir, logLevel: 'silent', env: 'development' }));
  });
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs an ADK agent whose artifacts land in the service, as docs/adk.md shows', async () => {
    // A tenant-wide token (`artifact-store token --sub ''`: no user, no session) may name any user, so
    // the example, whose user is the one npm start's token is bound to (dev), runs with it too;
    // test/examples.test.ts runs it with npm start's own token.
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_')));
    const minted = await promisify(execFile)(process.execPath, [...CLI_ARGS, 'token', '--sub', '', '--data-dir', dir], {
      cwd: ROOT,
      env: inherited,
      encoding: 'utf8',
    });
    const token = minted.stdout.trim();
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ tenant: 'dev', perms: ['read', 'write'] });
    expect(claims).not.toHaveProperty('sub');
    const out = await runExample('adk.ts', { ARTIFACT_STORE_URL: server.url, ARTIFACT_STORE_TOKEN: token });
    expect(out).toMatch(/^the tool saved chart\.png as version 0, then version 1$/m);
    expect(out).toMatch(
      /^in the store: chart\.png versions 0,1, image\/png, \d+ bytes, artifact:\/\/travel_agent_[0-9a-f]{24}$/m,
    );
    expect(out).toMatch(/^session s-2 sees: user:itinerary\.txt$/m);
    const link = /^download link: (http:\/\/127\.0\.0\.1:\d+\/\S+) \(image\/png\)$/m.exec(out)?.[1];
    // A browser needs no token for it, and gets the PNG the tool saved.
    const res = await fetch(link!);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(
      Buffer.from(await res.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    // What the service holds is what the example printed.
    const store = createHttpArtifactStore({ baseUrl: server.url, token });
    const versions = await store.names!.listVersions({
      app: 'travel_agent',
      name: 'chart.png',
      userId: 'dev',
      sessionId: 's-1',
    });
    expect(versions.map((v) => v.version)).toEqual([0, 1]);
  }, 120_000);
});
