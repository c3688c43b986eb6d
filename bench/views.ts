/**
 * View rows: what a model's reads of stored artifacts cost, against plain tools on the same bytes in
 * the same run. One service process (fs blobs, SQLite, the V8 flags of `npm start`) serves them all.
 *
 * - artifact_search: a fixed string over a 256 MiB log (GET /v1/artifacts/{id}/search, maxMatches 20,
 *   so the answer counts every matching line and returns 20) against `grep -c -F` on the same file,
 *   taking turns; the service's totalMatches must equal grep's count in every round. Both as MiB/s,
 *   so the ratio is grep's time over the service's (higher is better, as every ratio row). The
 *   service's RSS growth during each search is judged too.
 * - artifact_read: 200 lines at line 5,000,000 of a 1 GiB log (GET .../text), after the first call
 *   built the line index: p50 and p90 of the later calls, against a Range GET of the same bytes.
 * - artifact_query: one JSONPath over a 50 MB GitHub-search-like document (GET .../query), the first
 *   call (the worker parses it) and a later one (it keeps the parsed document), against JSON.parse
 *   of the same bytes in this process.
 *
 * The logs are generated line by line from the line's number (logLine), streamed to disk, so any
 * answer's lines can be checked without keeping the file.
 */
import { spawn } from 'node:child_process';
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startServerChild, watchRss, type ServerChild } from './children.js';
import { ceilingRow, infoRow, ratioRow, samples, spread, type Row, type Samples } from './report.js';
import { MiB } from './settings.js';
import { fmt, median, rotate } from './stats.js';
import { upload } from './transfer.js';

type Service = ServerChild<{ url: string; token: string }>;

const SEARCH_BYTES = 256 * MiB;
const READ_BYTES = 1024 * MiB;
const JSON_BYTES = 50_000_000;
const NEEDLE = 'status=503 upstream=tableau';
const READ_AT = 5_000_000;
const READ_LINES = 200;
/** Timed reads per round, at READ_AT + k * READ_STEP. */
const READ_CALLS = 30;
const READ_STEP = 1_000;
const READ_P50_LIMIT_MS = 20;
const SEARCH_RSS_LIMIT_MIB = 32;
const QUERY_NUMBER = 123_456;
const UPLOAD_TIMEOUT_MS = 600_000;

// ---------------------------------------------------------------------------------------------
// The generated log: line n (1-based) is a function of n alone.

/** A 32-bit mix of n (and a salt): the log's only source of variety. */
function mix(n: number, salt: number): number {
  let h = Math.imul(n ^ Math.imul(salt, 0x27d4eb2f), 0x9e3779b1);
  h ^= h >>> 15;
  h = Math.imul(h, 0x85ebca77);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae3d);
  h ^= h >>> 16;
  return h >>> 0;
}

const T0 = Date.parse('2026-11-28T06:00:00.000Z');
const PATHS = [
  '/v1/artifacts',
  '/v1/artifacts/{id}',
  '/v1/artifacts/{id}/text',
  '/v1/artifacts/{id}/search',
  '/v1/sessions/{id}/artifacts',
  '/v1/usage',
  '/healthz',
  '/v1/artifacts/{id}/links',
];
const AGENTS = ['python-httpx/0.23.0', 'artifact-store-cli/0.1.0', 'node-fetch/1.0', 'curl/7.88.1', 'Mozilla/5.0'];
const UPSTREAMS = ['s3', 'sqlite', 'auth', 'cache'];

/** Line n of the generated log, without its line end (~200 bytes, ASCII). */
export function logLine(n: number): string {
  const a = mix(n, 1);
  const b = mix(n, 2);
  const r = a % 1000;
  const status = r < 900 ? 200 : r < 950 ? 304 : r < 985 ? 404 : r < 995 ? 500 : 503;
  const level = status >= 500 ? 'ERROR' : status === 404 ? 'WARN' : 'INFO';
  // A 503 names its upstream; one in twenty is the needle's.
  const upstream = status === 503 ? ` upstream=${b % 20 === 0 ? 'tableau' : UPSTREAMS[b % 4]}` : '';
  const path = PATHS[b % PATHS.length]!.replace('{id}', (a >>> 8).toString(36));
  const trace = `${a.toString(16).padStart(8, '0')}${b.toString(16).padStart(8, '0')}`;
  return (
    `${new Date(T0 + n * 13).toISOString()} ${level} worker-${n % 8} processed request id=${n} path=${path}` +
    ` status=${status}${upstream} bytes=${b % 100_000} dur_ms=${(a >>> 20) % 900} trace=${trace}` +
    ` ua="${AGENTS[(a >>> 4) % AGENTS.length]}" tenant=t-${(b >>> 12) % 64} region=eu-west-1`
  );
}

/** What writing a log recorded: its lines, the needle's lines, and where the lines from `keepFrom` start. */
interface WrittenLog {
  lines: number;
  bytes: number;
  needleLines: number;
  /** Byte offset of line keepFrom + i (for ranges of the same bytes). */
  starts: number[];
}

/** Writes whole lines of logLine to `file` until it holds at least `bytes`, 1 MiB at a time. */
async function writeLog(file: string, bytes: number, keep?: { from: number; count: number }): Promise<WrittenLog> {
  const fh = await open(file, 'w');
  const out: WrittenLog = { lines: 0, bytes: 0, needleLines: 0, starts: [] };
  try {
    let chunk: string[] = [];
    let chunkBytes = 0;
    for (let n = 1; out.bytes < bytes; n++) {
      const line = `${logLine(n)}\n`;
      if (keep && n >= keep.from && n < keep.from + keep.count) out.starts.push(out.bytes);
      if (line.includes(NEEDLE)) out.needleLines++;
      chunk.push(line);
      chunkBytes += line.length;
      out.bytes += line.length;
      out.lines = n;
      if (chunkBytes >= MiB) {
        await fh.write(chunk.join(''), null, 'latin1');
        chunk = [];
        chunkBytes = 0;
      }
    }
    if (chunk.length > 0) await fh.write(chunk.join(''), null, 'latin1');
  } finally {
    await fh.close();
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The JSON document.

const WORDS = ['artifact', 'store', 'search', 'index', 'worker', 'timeout', 'upload', 'range', 'cache', 'budget'];
const titleOf = (number: number) =>
  `${WORDS[mix(number, 3) % WORDS.length]} ${WORDS[mix(number, 4) % WORDS.length]} fails after ${number % 97} retries (#${number})`;

/** A GitHub-search-like answer of about JSON_BYTES; `variant` changes total_count, so each is new content. */
function searchDocument(variant: number): Buffer {
  const parts: string[] = [];
  let size = 0;
  const head = `{"total_count":${1_000_000 + variant},"incomplete_results":false,"items":[`;
  size += head.length;
  for (let i = 0; size < JSON_BYTES; i++) {
    const number = 100_000 + i;
    const m = mix(number, 5);
    const body = Array.from({ length: 40 }, (_, k) => WORDS[mix(number, 10 + k) % WORDS.length]).join(' ');
    const item = JSON.stringify({
      id: 2_000_000_000 + number,
      number,
      title: titleOf(number),
      state: m % 3 === 0 ? 'closed' : 'open',
      user: { login: `user-${m % 5000}`, id: m % 100_000, type: 'User' },
      labels: [
        { name: ['bug', 'enhancement', 'question'][m % 3], color: 'd73a4a' },
        { name: `area/${WORDS[m % WORDS.length]}`, color: '0e8a16' },
      ],
      comments: m % 40,
      created_at: new Date(T0 - number * 60_000).toISOString(),
      body: `Steps:\n1. ${body}\n\nExpected: ${body.slice(0, 120)}`,
    });
    parts.push(i === 0 ? item : `,${item}`);
    size += item.length + (i === 0 ? 0 : 1);
  }
  parts.unshift(head);
  parts.push(']}');
  return Buffer.from(parts.join(''), 'utf8');
}

// ---------------------------------------------------------------------------------------------
// Calls.

const auth = (s: Service) => ({ Authorization: `Bearer ${s.info.token}` });

async function store(s: Service, source: Parameters<typeof upload>[1], type: string, name: string): Promise<string> {
  const r = await upload(
    `${s.info.url}/v1/artifacts`,
    source,
    { ...auth(s), 'Content-Type': type, 'X-Artifact-Filename': name },
    UPLOAD_TIMEOUT_MS,
  );
  if (r.status !== 201) throw new Error(`POST /v1/artifacts answered ${r.status}: ${r.body.slice(0, 300)}`);
  const { id } = JSON.parse(r.body) as { id?: unknown };
  if (typeof id !== 'string') throw new Error(`POST /v1/artifacts returned no id: ${r.body.slice(0, 300)}`);
  return id;
}

/** GETs a view as JSON; the time runs from the request to the parsed answer. */
async function view<T>(
  s: Service,
  id: string,
  what: string,
  query: Record<string, string>,
): Promise<{ ms: number; body: T }> {
  const url = `${s.info.url}/v1/artifacts/${encodeURIComponent(id)}/${what}?${new URLSearchParams(query)}`;
  const started = performance.now();
  const res = await fetch(url, { headers: auth(s) });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`GET .../${what} answered ${res.status}: ${text.slice(0, 300)}`);
  return { ms, body: JSON.parse(text) as T };
}

/** Runs a command to its end; its stdout and the time from spawn to exit. */
function timed(cmd: string, args: string[]): Promise<{ ms: number; stdout: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { env: { ...process.env, LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (s: string) => {
      stdout += s;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ ms: performance.now() - started, stdout, code }));
  });
}

const percentile = (values: number[], p: number) => {
  const v = [...values].sort((a, b) => a - b);
  return v[Math.min(v.length - 1, Math.max(0, Math.ceil((p / 100) * v.length) - 1))]!;
};

/** A latency judged against an absolute ceiling, with a same-run baseline beside it for scale. */
function latencyRow(metric: string, s: Samples, digits: number, limitMs?: number): Row {
  const target = limitMs === undefined ? '—' : `≤ ${limitMs} ms`;
  if (!s.service || s.service.length === 0)
    return { metric, service: 'n/a', baseline: spread(s.baseline, digits), ratio: 'n/a', target, result: 'not run' };
  const service = s.service;
  const ratios = service.map((v, i) => v / s.baseline[i]!);
  const judged = median(service);
  return {
    metric,
    service: spread(service, digits),
    baseline: spread(s.baseline, digits),
    ratio: spread(ratios, 1, '×'),
    target,
    result: limitMs === undefined ? 'info' : Number.isFinite(judged) ? (judged <= limitMs ? 'PASS' : 'FAIL') : 'n/a',
  };
}

// ---------------------------------------------------------------------------------------------

export async function viewRows(ctx: {
  work: string;
  runs: number;
  progress: (m: string) => void;
}): Promise<{ rows: Row[]; problems: string[]; notes: string[] }> {
  const problems: string[] = [];
  const notes: string[] = [];
  const problem = (step: string, err: unknown) => {
    problems.push(`views, ${step}: ${err instanceof Error ? err.message : String(err)}`);
    ctx.progress(`views: ${step} failed`);
  };
  const searchMiBs = samples();
  const searchRss = samples();
  const readP50 = samples();
  const readP90 = samples();
  const firstRead = samples();
  const queryFirst = samples();
  const queryKept = samples();
  const dataDir = join(ctx.work, 'views-data');
  let s: Service | undefined;
  try {
    s = await startServerChild('service (views)', 'service-server.ts', [dataDir, String(READ_BYTES + 64 * MiB)]);
  } catch (err) {
    problem('start', err);
  }

  if (s) {
    // 1. artifact_search against grep -c -F.
    const logFile = join(ctx.work, 'views-search.log');
    try {
      ctx.progress('views: writing a 256 MiB log');
      const log = await writeLog(logFile, SEARCH_BYTES);
      const id = await store(s, { file: logFile, size: log.bytes }, 'text/plain', 'app.log');
      const query = { pattern: NEEDLE, maxMatches: '20', budget: '50000' };
      type Found = { totalMatches: number; returnedMatches: number; lines: { line: number; text: string }[] };
      const check = (r: Found, want: number, who: string) => {
        if (r.totalMatches !== want) throw new Error(`${who}: totalMatches ${r.totalMatches}, want ${want}`);
        if (r.returnedMatches !== 20 || r.lines.length !== 20) throw new Error(`${who}: ${r.returnedMatches} returned`);
        for (const l of r.lines)
          if (l.text !== logLine(l.line)) throw new Error(`${who}: line ${l.line} reads ${JSON.stringify(l.text)}`);
      };
      const pid = s.pid;
      let rss = watchRss(pid);
      const warm = await view<Found>(s, id, 'search', query);
      const warmGrowth = rss.stop();
      check(warm.body, log.needleLines, 'warm-up search');
      // grep's first pass reads the file into the page cache (the service's blob is there since the upload).
      const first = await timed('grep', ['-c', '-F', NEEDLE, logFile]);
      if (Number(first.stdout.trim()) !== log.needleLines)
        throw new Error(`grep counted ${first.stdout.trim()}, the generator wrote ${log.needleLines}`);
      const grepMs: number[] = [];
      const serviceMs: number[] = [];
      for (let run = 0; run < ctx.runs; run++) {
        let grepCount = Number.NaN;
        let found: Found | undefined;
        await rotate(run, [
          async () => {
            const g = await timed('grep', ['-c', '-F', NEEDLE, logFile]);
            if (g.code !== 0) throw new Error(`grep exited ${g.code}`);
            grepCount = Number(g.stdout.trim());
            grepMs.push(g.ms);
            searchMiBs.baseline.push(log.bytes / MiB / (g.ms / 1000));
          },
          async () => {
            rss = watchRss(pid);
            const r = await view<Found>(s!, id, 'search', query);
            searchRss.service!.push(rss.stop());
            found = r.body;
            serviceMs.push(r.ms);
            searchMiBs.service!.push(log.bytes / MiB / (r.ms / 1000));
          },
        ]);
        check(found!, grepCount, `search, round ${run + 1} (grep counted ${grepCount})`);
        ctx.progress(`views: search round ${run + 1}/${ctx.runs} done`);
      }
      notes.push(
        `artifact_search: ${fmt(log.bytes / MiB, 0)} MiB, ${fmt(log.lines)} lines, ${fmt(log.needleLines)} of them holding "${NEEDLE}";` +
          ` the service ${fmt(median(serviceMs), 0)} ms, grep ${fmt(median(grepMs), 0)} ms (medians).` +
          ` The first search (not timed in the row) builds the line index as it goes: ${fmt(warm.ms, 0)} ms, RSS +${fmt(warmGrowth, 1)} MiB.`,
      );
    } catch (err) {
      problem('search', err);
      searchMiBs.service = null;
      searchRss.service = null;
    } finally {
      await rm(logFile, { force: true });
    }

    // 2. artifact_read far into a 1 GiB log.
    const bigFile = join(ctx.work, 'views-read.log');
    try {
      ctx.progress('views: writing a 1 GiB log');
      const span = READ_CALLS * READ_STEP + READ_LINES + 1;
      const log = await writeLog(bigFile, READ_BYTES, { from: READ_AT, count: span });
      if (log.lines < READ_AT + span) throw new Error(`the 1 GiB log has ${log.lines} lines, too few`);
      const id = await store(s, { file: bigFile, size: log.bytes }, 'text/plain', 'big.log');
      // For scale beside the first read (which counts every line): wc -l over the same file.
      const wc = await timed('wc', ['-l', bigFile]);
      if (Number.parseInt(wc.stdout, 10) !== log.lines) throw new Error(`wc -l counted ${wc.stdout.trim()}`);
      await rm(bigFile, { force: true });

      type Read = { offset: number; lines: string[]; totalLines: number };
      const readQuery = (at: number) => ({ offset: String(at), limit: String(READ_LINES), budget: '100000' });
      const checkRead = (r: Read, at: number) => {
        if (r.offset !== at || r.lines.length !== READ_LINES || r.totalLines !== log.lines)
          throw new Error(`read at ${at}: offset ${r.offset}, ${r.lines.length} lines of ${r.totalLines}`);
        // Every line against the generator (each is a function of its number).
        for (let i = 0; i < READ_LINES; i++)
          if (r.lines[i] !== logLine(at + i)) throw new Error(`read at ${at}: line ${at + i} differs`);
      };
      const first = await view<Read>(s, id, 'text', readQuery(READ_AT));
      checkRead(first.body, READ_AT);
      firstRead.service!.push(first.ms);
      firstRead.baseline.push(wc.ms);

      const rangeOf = (at: number) => {
        const i = at - READ_AT;
        return { start: log.starts[i]!, end: log.starts[i + READ_LINES]! - 1 };
      };
      const downloadUrl = `${s.info.url}/v1/artifacts/${encodeURIComponent(id)}`;
      for (let run = 0; run < ctx.runs; run++) {
        const text: number[] = [];
        const range: number[] = [];
        for (let k = 0; k < READ_CALLS; k++) {
          const at = READ_AT + k * READ_STEP;
          await rotate(run + k, [
            async () => {
              const { start, end } = rangeOf(at);
              const started = performance.now();
              const res = await fetch(downloadUrl, { headers: { ...auth(s!), Range: `bytes=${start}-${end}` } });
              const body = Buffer.from(await res.arrayBuffer());
              range.push(performance.now() - started);
              if (res.status !== 206 || body.length !== end - start + 1)
                throw new Error(`Range GET at line ${at}: status ${res.status}, ${body.length} bytes`);
              let want = '';
              for (let i = 0; i < READ_LINES; i++) want += `${logLine(at + i)}\n`;
              if (body.toString('latin1') !== want) throw new Error(`Range GET at line ${at}: not the lines' bytes`);
            },
            async () => {
              const r = await view<Read>(s!, id, 'text', readQuery(at));
              text.push(r.ms);
              checkRead(r.body, at);
            },
          ]);
        }
        readP50.service!.push(percentile(text, 50));
        readP90.service!.push(percentile(text, 90));
        readP50.baseline.push(percentile(range, 50));
        readP90.baseline.push(percentile(range, 90));
        ctx.progress(`views: read round ${run + 1}/${ctx.runs} done`);
      }
      const bytesPerRead = log.starts[READ_LINES]! - log.starts[0]!;
      notes.push(
        `artifact_read: ${fmt(log.bytes / MiB, 0)} MiB, ${fmt(log.lines)} lines; per round ${READ_CALLS} reads of ${READ_LINES} lines` +
          ` (~${fmt(bytesPerRead / 1024, 0)} KiB) at lines ${fmt(READ_AT)} + k × ${fmt(READ_STEP)}, each after a Range GET of the same bytes` +
          ' (the two take turns going first); every line read is checked against the generator.' +
          ' The first read builds the line index (one pass over the whole blob); its baseline is `wc -l` over the same file.',
      );
    } catch (err) {
      problem('read', err);
      for (const x of [readP50, readP90, firstRead]) x.service = null;
    } finally {
      await rm(bigFile, { force: true });
    }

    // 3. artifact_query against JSON.parse.
    try {
      const path = `$.items[?@.number == ${QUERY_NUMBER}].title`;
      const want = titleOf(QUERY_NUMBER);
      type Queried = { totalMatches: number; matches: { path: string; value: unknown }[] };
      const checkQuery = (r: Queried, who: string) => {
        if (r.totalMatches !== 1 || r.matches[0]?.value !== want)
          throw new Error(`${who}: ${JSON.stringify(r).slice(0, 300)}`);
      };
      // A small document first, so that the worker is up and loaded before the first timed query.
      const tiny = await store(
        s,
        { buffer: Buffer.from('{"items":[{"number":1,"title":"x"}]}') },
        'application/json',
        'tiny.json',
      );
      let bytes = 0;
      for (let run = 0; run < ctx.runs; run++) {
        const doc = searchDocument(run);
        bytes = doc.length;
        const id = await store(s, { buffer: doc }, 'application/json', `search-${run}.json`);
        await view(s, tiny, 'query', { path: '$.items[0].title' });
        let parseMs = Number.NaN;
        await rotate(run, [
          async () => {
            const started = performance.now();
            const parsed = JSON.parse(doc.toString('utf8')) as { items: { number: number; title: string }[] };
            parseMs = performance.now() - started;
            if (parsed.items.find((x) => x.number === QUERY_NUMBER)?.title !== want)
              throw new Error('JSON.parse: the item is not in the document');
          },
          async () => {
            const a = await view<Queried>(s!, id, 'query', { path });
            checkQuery(a.body, 'first query');
            const b = await view<Queried>(s!, id, 'query', { path });
            checkQuery(b.body, 'second query');
            queryFirst.service!.push(a.ms);
            queryKept.service!.push(b.ms);
          },
        ]);
        queryFirst.baseline.push(parseMs);
        queryKept.baseline.push(parseMs);
        ctx.progress(`views: query round ${run + 1}/${ctx.runs} done`);
      }
      notes.push(
        `artifact_query: \`${path}\` over ${fmt(bytes / 1e6, 1)} MB of JSON (a new document each round, so the first query parses);` +
          ' a query on a small document first starts the worker; baseline: `JSON.parse(buffer.toString())` of the same bytes in the bench process.',
      );
    } catch (err) {
      problem('query', err);
      queryFirst.service = null;
      queryKept.service = null;
    }

    await s.stop();
  }
  await rm(dataDir, { recursive: true, force: true });

  const searchRow = ratioRow(
    'artifact_search, a fixed string over a 256 MiB log, vs `grep -c -F` (MiB/s; ratio = grep’s time ÷ the service’s)',
    searchMiBs,
    0,
    0.5,
  );
  const rssRow = {
    ...ceilingRow('artifact_search: server RSS growth during a search (MiB)', searchRss, SEARCH_RSS_LIMIT_MIB, 'MiB'),
    baseline: '—',
  };
  return {
    rows: [
      searchRow,
      rssRow,
      latencyRow(
        `artifact_read, ${READ_LINES} lines at line 5,000,000 of a 1 GiB log, later calls, p50 (ms; baseline: Range GET of the same bytes; ratio = read ÷ Range GET)`,
        readP50,
        1,
        READ_P50_LIMIT_MS,
      ),
      latencyRow('artifact_read: the same, p90 (ms)', readP90, 1),
      latencyRow(
        'artifact_read: the first call, which builds the line index (ms; baseline: `wc -l` of the file)',
        firstRead,
        0,
      ),
      infoRow('artifact_query, one JSONPath over 50 MB of JSON, first call (parses) ÷ JSON.parse (ms)', queryFirst, 0),
      infoRow('artifact_query: a later call (parsed document kept) ÷ JSON.parse (ms)', queryKept, 1),
    ],
    problems,
    notes,
  };
}
