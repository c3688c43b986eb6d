/**
 * The shared ADK cases (test/fixtures/adk-cases.json) against artifact-store-sdk/adk: the HTTP store
 * against a real service (`startServer`, a port and a data directory of its own). The Python suite runs
 * the same list against artifact_store_client.adk (clients/python/tests/test_adk_cases.py), so both
 * adapters answer each call alike. Each case gets a fresh tenant. Then each adapter loads what the
 * other saved (the Python one run by Debian's python3, as test/python-client.test.ts runs it).
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Part } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArtifactStoreArtifactService, type StoredArtifactVersion } from '../src/adk/index.js';
import { createHttpArtifactStore } from '../src/client/index.js';
import { loadConfig } from '../src/core/config.js';
import { type RunningServer, startServer } from '../src/node.js';

type NeutralPart =
  | { text: string }
  | { inlineData: { base64: string; mimeType?: string; displayName?: string } }
  | { fileData: { fileUri: string; mimeType?: string; displayName?: string } }
  | Record<string, never>;

interface ExpectedVersion {
  version: number;
  mimeType: string | null;
  customMetadata: Record<string, unknown>;
}

interface Step {
  op: 'save' | 'load' | 'listArtifactKeys' | 'delete' | 'listVersions' | 'listArtifactVersions' | 'getArtifactVersion';
  app?: string;
  user?: string;
  session?: string | null;
  filename?: string;
  version?: number;
  part?: NeutralPart;
  customMetadata?: Record<string, unknown>;
  expect?: unknown;
  error?: string;
}

interface Cases {
  defaults: { app: string; user: string; session: string };
  /** Each adapter's canonicalUri form: this one's is artifact://{id}, ADK for TypeScript having no artifact:// grammar. */
  canonicalUri: { typescript: string; python: string };
  cases: { name: string; steps: Step[] }[];
}

const CASES = JSON.parse(readFileSync(new URL('./fixtures/adk-cases.json', import.meta.url), 'utf8')) as Cases;

/** A case's part as ADK passes it. */
function partOf(neutral: NeutralPart): Part {
  if ('text' in neutral) return { text: neutral.text };
  if ('inlineData' in neutral) {
    const { base64, ...rest } = neutral.inlineData;
    return { inlineData: { data: base64, ...rest } };
  }
  if ('fileData' in neutral) return { fileData: { ...neutral.fileData } };
  return {};
}

/** A loaded Part in the cases' form. */
function neutralOf(part: Part | undefined): NeutralPart | null {
  if (!part) return null;
  if (part.inlineData) {
    const { data, ...rest } = part.inlineData;
    return { inlineData: { base64: data ?? '', ...rest } };
  }
  if (part.fileData) return { fileData: { ...part.fileData } as { fileUri: string } };
  return { text: part.text ?? '' };
}

function checkVersion(got: StoredArtifactVersion | undefined, want: ExpectedVersion, app: string, started: number) {
  expect(got, `expected version ${JSON.stringify(want)}`).toBeDefined();
  expect({
    version: got!.version,
    mimeType: got!.mimeType ?? null,
    customMetadata: got!.customMetadata ?? {},
  }).toEqual(want);
  const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const form = literal(CASES.canonicalUri.typescript).replace(literal('{id}'), `${literal(app)}_[0-9a-f]{24}`);
  expect(got!.canonicalUri).toMatch(new RegExp(`^${form}$`));
  expect(got!.createTime).toBeGreaterThanOrEqual(started / 1000 - 5);
  expect(got!.createTime).toBeLessThanOrEqual(Date.now() / 1000 + 5);
}

async function runStep(adk: ArtifactStoreArtifactService, step: Step): Promise<unknown> {
  const where = {
    appName: step.app ?? CASES.defaults.app,
    userId: step.user ?? CASES.defaults.user,
    // ADK's types want a sessionId; a `user:` filename (or a refusal) goes without one.
    sessionId: (step.session === null ? undefined : (step.session ?? CASES.defaults.session)) as string,
  };
  if (step.op === 'listArtifactKeys') return adk.listArtifactKeys(where);
  const named = { ...where, filename: step.filename! };
  switch (step.op) {
    case 'save':
      return adk.saveArtifact({
        ...named,
        artifact: partOf(step.part!),
        ...(step.customMetadata !== undefined ? { customMetadata: step.customMetadata } : {}),
      });
    case 'load':
      return neutralOf(await adk.loadArtifact({ ...named, version: step.version }));
    case 'delete':
      return (await adk.deleteArtifact(named)) ?? null;
    case 'listVersions':
      return adk.listVersions(named);
    case 'listArtifactVersions':
      return adk.listArtifactVersions(named);
    case 'getArtifactVersion':
      return (await adk.getArtifactVersion({ ...named, version: step.version })) ?? null;
  }
}

describe('the shared ADK cases, against the TypeScript adapter over HTTP', () => {
  let server: RunningServer;
  let dir: string;
  let tenants = 0;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'adk-cases-'));
    server = await startServer(loadConfig({}, { port: 0, dataDir: dir, logLevel: 'silent', env: 'development' }));
  });
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const PYTHON = '/usr/bin/python3';
  const noPython = !existsSync(PYTHON) || spawnSync(PYTHON, ['-c', 'import httpx'], { encoding: 'utf8' }).status !== 0;

  it.skipIf(noPython && process.env.CI !== 'true')('a version saved by either adapter loads in the other', async () => {
    const token = await server.mintToken({ tenant: `adk-interop-${process.pid}`, perms: ['read', 'write'] });
    const adk = new ArtifactStoreArtifactService(createHttpArtifactStore({ baseUrl: server.url, token }));
    const where = { appName: 'interop', userId: 'u', sessionId: 's' };
    const png = {
      inlineData: {
        data: Buffer.from([0x89, 0x50, 0, 1]).toString('base64'),
        mimeType: 'image/png',
        displayName: 'Chart.png',
      },
    };
    await adk.saveArtifact({ ...where, filename: 'chart.png', artifact: png, customMetadata: { lang: 'ts', n: 1 } });
    await adk.saveArtifact({ ...where, filename: 'notes.md', artifact: { text: 'ünï ✓' } });
    await adk.saveArtifact({
      ...where,
      filename: 'user:doc.pdf',
      artifact: { fileData: { fileUri: 'gs://b/doc.pdf' } },
    });
    const script = `
import asyncio, base64, json
from artifact_store_client.adk import ArtifactStoreArtifactService, Blob, FileData, Part

def neutral(p):
    if p.inline_data is not None:
        b = p.inline_data
        return {"inlineData": {"data": base64.b64encode(b.data).decode(), "mimeType": b.mime_type, "displayName": b.display_name}}
    if p.file_data is not None:
        return {"fileData": {"fileUri": p.file_data.file_uri, "mimeType": p.file_data.mime_type}}
    return {"text": p.text}

async def main():
    async with ArtifactStoreArtifactService() as adk:
        w = {"app_name": "interop", "user_id": "u", "session_id": "s"}
        out = {name: neutral(await adk.load_artifact(**w, filename=name)) for name in ("chart.png", "notes.md", "user:doc.pdf")}
        out["meta"] = (await adk.get_artifact_version(**w, filename="chart.png")).custom_metadata
        png = Part(inline_data=Blob(data=b"\\x00py", mime_type="image/png", display_name="Py.png"))
        await adk.save_artifact(**w, filename="from-python.png", artifact=png, custom_metadata={"lang": "python"})
        await adk.save_artifact(**w, filename="user:from-python.txt", artifact=Part(text="hi ✓"))
        await adk.save_artifact(**w, filename="link.pdf", artifact=Part(file_data=FileData(file_uri="gs://b/x.pdf", mime_type="application/pdf")))
        print(json.dumps(out))

asyncio.run(main())
`;
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_')));
    // Not spawnSync: the service answering the script runs in this process.
    const { stdout } = await promisify(execFile)(PYTHON, ['-c', script], {
      cwd: join(import.meta.dirname, '..'),
      env: { ...env, PYTHONPATH: 'clients/python/src', ARTIFACT_STORE_URL: server.url, ARTIFACT_STORE_TOKEN: token },
    });
    expect(JSON.parse(stdout)).toEqual({
      'chart.png': { inlineData: { data: png.inlineData.data, mimeType: 'image/png', displayName: 'Chart.png' } },
      'notes.md': { text: 'ünï ✓' },
      'user:doc.pdf': { fileData: { fileUri: 'gs://b/doc.pdf', mimeType: null } },
      meta: { lang: 'ts', n: 1 },
    });
    expect(await adk.loadArtifact({ ...where, filename: 'from-python.png' })).toEqual({
      inlineData: {
        data: Buffer.from('\x00py', 'latin1').toString('base64'),
        mimeType: 'image/png',
        displayName: 'Py.png',
      },
    });
    expect((await adk.getArtifactVersion({ ...where, filename: 'from-python.png' }))?.customMetadata).toEqual({
      lang: 'python',
    });
    expect(await adk.loadArtifact({ ...where, sessionId: 'other', filename: 'user:from-python.txt' })).toEqual({
      text: 'hi ✓',
    });
    expect(await adk.loadArtifact({ ...where, filename: 'link.pdf' })).toEqual({
      fileData: { fileUri: 'gs://b/x.pdf', mimeType: 'application/pdf' },
    });
  });

  it.each(CASES.cases.map((c) => [c.name, c] as const))('%s', async (_name, testCase) => {
    // A tenant-wide token (no user, no session): each call names its user and session.
    const token = await server.mintToken({ tenant: `adk-cases-${process.pid}-${++tenants}`, perms: ['read', 'write'] });
    const adk = new ArtifactStoreArtifactService(createHttpArtifactStore({ baseUrl: server.url, token }));
    const started = Date.now();
    for (const [index, step] of testCase.steps.entries()) {
      const label = `step ${index}: ${JSON.stringify(step)}`;
      if (step.error !== undefined) {
        await expect(runStep(adk, step), label).rejects.toThrow(step.error);
        continue;
      }
      const got = await runStep(adk, step);
      const app = step.app ?? CASES.defaults.app;
      if (step.op === 'listArtifactVersions') {
        const want = step.expect as ExpectedVersion[];
        const versions = got as StoredArtifactVersion[];
        expect(versions, label).toHaveLength(want.length);
        for (const [i, v] of versions.entries()) checkVersion(v, want[i]!, app, started);
      } else if (step.op === 'getArtifactVersion' && step.expect !== null) {
        checkVersion(got as StoredArtifactVersion, step.expect as ExpectedVersion, app, started);
      } else {
        expect(got, label).toEqual(step.expect);
      }
    }
  });
});
