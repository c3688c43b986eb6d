/**
 * ADK row: saveArtifact + loadArtifact of 1 MiB through ArtifactStoreArtifactService over the HTTP
 * store, against putBytes + get of the same bytes through the same store, alternating rounds in one
 * run against the bench's service. The adapter's part is ADK's: the bytes arrive as base64 in a
 * Part and leave as one, so it decodes and encodes 1 MiB each way. Target ≥ 0.85×.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { ArtifactStoreArtifactService } from '../src/adk/index.js';
import { createHttpArtifactStore } from '../src/client/index.js';
import { ratioRow, samples, type Row } from './report.js';
import { MiB } from './settings.js';

const ROUNDS = 9;
const WARMUPS = 2;
const OPS_PER_ROUND = 8;
const MIN_RATIO = 0.85;

export async function adkRows(o: {
  service: { url: string; token: string };
  progress(msg: string): void;
}): Promise<{ rows: Row[]; problems: string[] }> {
  const figures = samples();
  const problems: string[] = [];
  try {
    // The dev token is tenant-wide, user "dev": ADK's userId must be it.
    const store = createHttpArtifactStore({ baseUrl: o.service.url, token: o.service.token });
    const adk = new ArtifactStoreArtifactService(store);
    const bytes = randomBytes(MiB);
    const data = bytes.toString('base64');
    const request = { appName: 'bench', userId: 'dev', sessionId: 'adk-bench', filename: 'payload.bin' };
    const throughAdk = async () => {
      const started = performance.now();
      for (let i = 0; i < OPS_PER_ROUND; i++) {
        const version = await adk.saveArtifact({
          ...request,
          artifact: { inlineData: { data, mimeType: 'application/octet-stream' } },
        });
        const part = await adk.loadArtifact({ ...request, version });
        if (part?.inlineData?.data?.length !== data.length) throw new Error('the adapter loaded other bytes');
      }
      // MiB moved per second: each op carries 1 MiB.
      return (OPS_PER_ROUND * 2) / ((performance.now() - started) / 1000);
    };
    const throughSdk = async () => {
      const started = performance.now();
      for (let i = 0; i < OPS_PER_ROUND; i++) {
        const ref = await store.putBytes(bytes, { mimeType: 'application/octet-stream' });
        const back = await store.get(ref.id);
        if (back?.byteLength !== bytes.length) throw new Error('the SDK read other bytes');
      }
      return (OPS_PER_ROUND * 2) / ((performance.now() - started) / 1000);
    };
    for (let round = 0; round < WARMUPS + ROUNDS; round++) {
      const sides: (() => Promise<void>)[] = [
        async () => {
          const mibPerS = await throughAdk();
          if (round >= WARMUPS) figures.service!.push(mibPerS);
        },
        async () => {
          const mibPerS = await throughSdk();
          if (round >= WARMUPS) figures.baseline.push(mibPerS);
        },
      ];
      for (const side of round % 2 === 0 ? sides : sides.reverse()) await side();
    }
    await adk.deleteArtifact(request);
    o.progress(`adk: ${ROUNDS} rounds of ${OPS_PER_ROUND} saves + loads each way done`);
  } catch (err) {
    problems.push(`ADK row: ${(err as Error).message}`);
    figures.service = null;
  }
  return {
    rows: [
      ratioRow('ADK: saveArtifact + loadArtifact 1 MiB over HTTP, vs putBytes + get (MiB/s)', figures, 0, MIN_RATIO),
    ],
    problems,
  };
}
