/**
 * The views over a 1 GiB log, end to end against `artifact-store serve` in its own process: the log is
 * generated to a temp file (never held in memory), streamed up, then read at line 5,000,000 and
 * searched whole. Answers are checked against lines computed here and against grep run on the same
 * file; the service's peak memory during the reads and searches is read from /proc. No wall-clock
 * limits: the timings are printed for information. Needs ~4 GiB free in the temp folder (the file and
 * the service's copy), else it is skipped saying so.
 */
import { execFile } from 'node:child_process';
import { createReadStream, readFileSync, statfsSync } from 'node:fs';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliServer, startCliServer } from './helpers/cli-server.js';

const run = promisify(execFile);
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** Lines of ~200 bytes (190 to 210, 200 on average): 1 GiB. */
const LINES = Math.floor(GiB / 200);
const MARKER = 'XYZZY-MARKER-7F3A';
/** The marker is on line n when n % MARKER_EVERY === MARKER_AT: ~300 lines. */
const MARKER_EVERY = 17_389;
const MARKER_AT = 4_242;
/** A simple regex, ~80 matches (1 line in 65,536). */
const REGEX = 'req=beef[0-9a-f]{4} ';

const FILLER = 'abcdefghijklmnopqrstuvwxyz0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ-_.,;:'.repeat(4);
const LEVELS = ['INFO', 'INFO', 'INFO', 'DEBUG', 'WARN', 'ERROR'];

/** Line n (1-based) of the log, without its line end: a function of n alone. */
function lineText(n: number): string {
  let h = Math.imul(n, 0x9e3779b1) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  h >>>= 0;
  const s = n % 86_400;
  const time = `${String(Math.floor(s / 3600)).padStart(2, '0')}:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
  const head =
    `${String(n).padStart(8, '0')} 2024-05-01T${time}.${String(h % 1000).padStart(3, '0')}Z ${LEVELS[h % 6]} ` +
    `worker-${n % 97} req=${h.toString(16).padStart(8, '0')} GET /api/v1/items/${h % 100_000} took=${h % 997}ms` +
    (n % MARKER_EVERY === MARKER_AT ? ` ${MARKER}` : '');
  const length = 189 + (h % 21);
  return `${head} ${FILLER.slice(0, Math.max(0, length - head.length - 1))}`;
}

/** Writes the log to `path` in pieces of 8 MiB; its size. */
async function writeLog(path: string): Promise<number> {
  const file = await open(path, 'w');
  const piece = Buffer.alloc(8 * MiB + 4096);
  let size = 0;
  let at = 0;
  try {
    for (let n = 1; n <= LINES; n++) {
      at += piece.write(lineText(n), at, 'latin1');
      piece[at++] = 0x0a;
      if (at >= 8 * MiB || n === LINES) {
        await file.write(piece, 0, at);
        size += at;
        at = 0;
      }
    }
  } finally {
    await file.close();
  }
  return size;
}

/** Why this machine cannot run the test, if it cannot: free space in the temp folder. */
const skipReason = (() => {
  try {
    const fs = statfsSync(tmpdir());
    const free = fs.bavail * fs.bsize;
    return free < 4 * GiB
      ? `needs ~4 GiB free in ${tmpdir()} for a 1 GiB log and the service's copy of it; only ${(free / GiB).toFixed(1)} GiB is free`
      : undefined;
  } catch (err) {
    return `cannot tell the free space of ${tmpdir()} (${(err as Error).message})`;
  }
})();

function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
}

/** Resets the child's peak RSS to its RSS now (5 to /proc/<pid>/clear_refs); false where not allowed. */
async function resetPeak(pid: number): Promise<boolean> {
  try {
    await writeFile(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** `grep <args>` over the log: its matching lines as { line, text }. */
async function grep(args: string[], path: string): Promise<{ line: number; text: string }[]> {
  const { stdout } = await run('grep', ['-n', ...args, path], {
    maxBuffer: 64 * MiB,
    env: { ...process.env, LC_ALL: 'C' },
  });
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((row) => {
      const colon = row.indexOf(':');
      return { line: Number(row.slice(0, colon)), text: row.slice(colon + 1) };
    });
}

const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

let dir: string | undefined;
let logPath: string;
let logSize: number;
let srv: CliServer | undefined;
let id: string;
let peak: { reset: boolean; before: { rss: number; hwm: number } };
const timings: string[] = [];
/** The service's memory after each phase, for the report. */
const phases: string[] = [];
const phase = (name: string) => {
  if (!srv) return;
  const m = memoryOf(srv.proc.pid!);
  phases.push(`${name}: RSS ${mib(m.rss)}, peak ${mib(m.hwm)}`);
};

async function get(path: string) {
  const began = performance.now();
  const res = await fetch(`${srv!.url}${path}`, { headers: { Authorization: `Bearer ${srv!.token}` } });
  const body = (await res.json()) as Record<string, any>;
  return { status: res.status, body, ms: performance.now() - began };
}

const q = (o: Record<string, string | number | boolean>) =>
  new URLSearchParams(Object.entries(o).map(([k, v]) => [k, String(v)])).toString();

describe('a 1 GiB log through the service', () => {
  beforeAll(async () => {
    if (skipReason) return;
    dir = await mkdtemp(join(tmpdir(), 'views-large-'));
    logPath = join(dir, 'big.log');
    let began = performance.now();
    logSize = await writeLog(logPath);
    timings.push(
      `wrote ${mib(logSize)} (${LINES.toLocaleString('en-US')} lines) in ${(performance.now() - began).toFixed(0)} ms`,
    );

    srv = await startCliServer(join(dir, 'data'), {
      ARTIFACT_STORE_MAX_ARTIFACT_BYTES: String(2 * GiB),
      // As `npm start` and the Docker image run it.
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-semi-space-size=2`.trim(),
    });
    began = performance.now();
    const res = await fetch(`${srv.url}/v1/artifacts`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${srv.token}`,
        'Content-Type': 'text/plain',
        'X-Artifact-Filename': 'big.log',
      },
      body: Readable.toWeb(createReadStream(logPath, { highWaterMark: MiB })) as ReadableStream<Uint8Array>,
      duplex: 'half',
    } as RequestInit & { duplex: 'half' });
    const ref = (await res.json()) as Record<string, any>;
    expect(res.status, JSON.stringify(ref)).toBe(201);
    expect(ref.sizeBytes).toBe(logSize);
    id = ref.id;
    timings.push(`uploaded in ${(performance.now() - began).toFixed(0)} ms`);

    const pid = srv.proc.pid!;
    peak = { reset: await resetPeak(pid), before: memoryOf(pid) };
  }, 240_000);

  afterAll(async () => {
    await srv?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (timings.length > 0) console.info(`1 GiB log: ${timings.join('; ')}; service memory ${phases.join('; ')}`);
  }, 60_000);

  it('reads 200 lines at line 5,000,000, twice, equal to the lines computed', async (ctx) => {
    if (skipReason) {
      ctx.skip(true, skipReason);
      return;
    }
    const expected = Array.from({ length: 200 }, (_, i) => lineText(5_000_000 + i));
    for (const round of ['first (builds the line index)', 'second']) {
      const a = await get(`/v1/artifacts/${id}/text?${q({ offset: 5_000_000, limit: 200, budget: 100_000 })}`);
      expect(a.status, JSON.stringify(a.body).slice(0, 300)).toBe(200);
      expect(a.body.totalLines).toBe(LINES);
      expect(a.body.offset).toBe(5_000_000);
      expect(a.body.nextOffset).toBe(5_000_200);
      expect(a.body.lines).toEqual(expected);
      timings.push(`read at 5,000,000, ${round}: ${a.ms.toFixed(0)} ms`);
    }
    // Elsewhere, and the last lines.
    const early = await get(`/v1/artifacts/${id}/text?${q({ offset: 1_234_567, limit: 50 })}`);
    expect(early.body.lines).toEqual(Array.from({ length: 50 }, (_, i) => lineText(1_234_567 + i)));
    const last = await get(`/v1/artifacts/${id}/text?${q({ offset: LINES - 1 })}`);
    expect(last.body.lines).toEqual([lineText(LINES - 1), lineText(LINES)]);
    expect(last.body.nextOffset).toBeNull();
    timings.push(`read at 1,234,567: ${early.ms.toFixed(0)} ms; at the end: ${last.ms.toFixed(0)} ms`);
    phase('after the reads');
  }, 240_000);

  it('finds the marker on the lines grep -n -F finds, and counts them as grep -c does', async (ctx) => {
    if (skipReason) {
      ctx.skip(true, skipReason);
      return;
    }
    const truth = await grep(['-F', MARKER], logPath);
    const { stdout: count } = await run('grep', ['-c', '-F', MARKER, logPath], {
      env: { ...process.env, LC_ALL: 'C' },
    });
    expect(truth.length).toBe(Number(count.trim()));
    expect(truth.length).toBeGreaterThan(200);
    expect(truth.length).toBeLessThan(500);
    // And grep agrees with the generator.
    expect(truth.map((t) => t.line)).toEqual(
      Array.from({ length: truth.length }, (_, i) => MARKER_AT + i * MARKER_EVERY),
    );
    const a = await get(`/v1/artifacts/${id}/search?${q({ pattern: MARKER, maxMatches: 500, budget: 1_000_000 })}`);
    expect(a.status, JSON.stringify(a.body).slice(0, 300)).toBe(200);
    expect(a.body.totalMatches).toBe(Number(count.trim()));
    expect(a.body.returnedMatches).toBe(truth.length);
    expect(a.body.nextOffset).toBeNull();
    expect(a.body.lines.map((l: any) => ({ line: l.line, text: l.text }))).toEqual(truth);
    expect(a.body.lines.every((l: any) => l.match)).toBe(true);
    timings.push(`fixed-string search (${truth.length} matches): ${a.ms.toFixed(0)} ms`);
    phase('after the fixed-string search');
  }, 240_000);

  it('a regex search finds the lines grep -n -E finds', async (ctx) => {
    if (skipReason) {
      ctx.skip(true, skipReason);
      return;
    }
    const truth = await grep(['-E', REGEX], logPath);
    expect(truth.length).toBeGreaterThan(10);
    expect(truth.length).toBeLessThan(500);
    const a = await get(
      `/v1/artifacts/${id}/search?${q({ pattern: REGEX, regex: true, maxMatches: 500, budget: 1_000_000 })}`,
    );
    expect(a.status, JSON.stringify(a.body).slice(0, 300)).toBe(200);
    expect(a.body.totalMatches).toBe(truth.length);
    expect(a.body.nextOffset).toBeNull();
    expect(a.body.lines.map((l: any) => ({ line: l.line, text: l.text }))).toEqual(truth);
    timings.push(`regex search (${truth.length} matches): ${a.ms.toFixed(0)} ms`);
    phase('after the regex search');
  }, 240_000);

  // Fails today (left failing, not it.fails: the margin is small, so it may pass now and then). The
  // reads and the fixed-string search move the peak by a few MiB; the regex search alone raises it by
  // ~55-75 MiB (and consecutive regex searches by up to ~200 MiB before it falls back), though it holds
  // little at a time: garbage from its 64 KiB spans (REGEX_SPAN_BYTES, src/service/views/search.ts),
  // each decoded to a string in findMatches and built with concatBytes in spansOf, collected late.
  it("the service's peak memory grows by at most 64 MiB over the reads and searches", async (ctx) => {
    if (skipReason) {
      ctx.skip(true, skipReason);
      return;
    }
    const after = memoryOf(srv!.proc.pid!);
    const growth = after.hwm - (peak.reset ? peak.before.rss : peak.before.hwm);
    timings.push(
      `service RSS ${mib(peak.before.rss)} before the reads, ${mib(after.rss)} after; peak ${mib(after.hwm)} ` +
        `(${peak.reset ? 'reset before the reads' : 'lifetime'}); growth ${mib(growth)}`,
    );
    expect(growth).toBeLessThanOrEqual(64 * MiB);
  });
});
