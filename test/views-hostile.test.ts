/**
 * The views (GET /v1/artifacts/{id}/text, /search, /query) against hostile and broken input, end to
 * end against `artifact-store serve` in its own process, as production runs it: pdf.js on its worker
 * thread, regexps on V8's linear-engine fallback, the process's real memory and event loop. Each bad
 * input gets a clear answer (status, code, a message that says what to do), nothing hangs, other
 * requests are answered while a costly one runs, and the service's peak memory stays bounded while a
 * ZIP bomb is refused. The same routes in-process are test/http-views.test.ts; the sandbox and the
 * ZIP reader on their own are test/view-sandbox.test.ts and test/views-zip-image.test.ts.
 */
import { hasPdftotext, slowPdf, words } from './helpers/pdfs.js';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import { TextReader, Uint8ArrayReader, Uint8ArrayWriter, ZipWriter } from '@zip.js/zip.js/lib/zip-core-native.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '../src/http/tokens.js';
import { bytesOf } from './helpers/app.js';
import { type CliServer, startCliServer } from './helpers/cli-server.js';
import { mibOfText, rawZip, repeatedDeflated, zerosDeflated } from './helpers/zip-bomb.js';
import { FONT_PAYLOAD_MARKER, SCRIPT_PAYLOAD_MARKER } from './fixtures/views/make-fixtures.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

const SECRET = { kid: 'hostile', secret: randomBytes(32).toString('base64url') };
const fixtures = fileURLToPath(new URL('./fixtures/views/', import.meta.url));
const fixture = (name: string) => new Uint8Array(readFileSync(join(fixtures, name)));

let dir: string;
let srv: CliServer;
let acme: string;
let rival: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'views-hostile-'));
  srv = await startCliServer(join(dir, 'data'), {
    ARTIFACT_STORE_JWT_SECRETS: `${SECRET.kid}:${SECRET.secret}`,
    // As `npm start` and the Docker image run it.
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-semi-space-size=2`.trim(),
  });
  acme = await mintToken(SECRET, { tenant: 'acme', sub: 'agent', perms: ['read', 'write'] }, 3600);
  rival = await mintToken(SECRET, { tenant: 'rival', sub: 'agent', perms: ['read', 'write'] }, 3600);
}, 90_000);

afterAll(async () => {
  await srv?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------------
// Talking to the service.

async function put(body: string | Uint8Array, type: string, headers: Record<string, string> = {}, who = acme) {
  const res = await fetch(`${srv.url}/v1/artifacts`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${who}`, 'Content-Type': type, ...headers },
    body: typeof body === 'string' ? body : (body as Uint8Array<ArrayBuffer>),
  });
  const json = (await res.json()) as Record<string, any>;
  // 201, or 200 when this scope holds the same bytes already.
  expect([200, 201], JSON.stringify(json)).toContain(res.status);
  return json.id as string;
}

interface Answer {
  status: number;
  body: Record<string, any>;
  /** Milliseconds from sending to the whole body read. */
  ms: number;
  /** performance.now() when the body was read. */
  doneAt: number;
}

async function get(path: string, who = acme): Promise<Answer> {
  const began = performance.now();
  const res = await fetch(`${srv.url}${path}`, { headers: { Authorization: `Bearer ${who}` } });
  const body = (await res.json()) as Record<string, any>;
  const doneAt = performance.now();
  return { status: res.status, body, ms: doneAt - began, doneAt };
}

const q = (o: Record<string, string | number | boolean>) =>
  new URLSearchParams(Object.entries(o).map(([k, v]) => [k, String(v)])).toString();

/** An error answer: its status, its code, and a message that says what to do (matching `message`). */
function expectError(a: Answer, status: number, code: string, message?: RegExp) {
  expect(a.status, JSON.stringify(a.body)).toBe(status);
  expect(Object.keys(a.body).filter((k) => k !== 'details')).toEqual(['code', 'message']);
  expect(a.body.code).toBe(code);
  expect(typeof a.body.message).toBe('string');
  expect(a.body.message.length).toBeGreaterThan(30);
  if (message) expect(a.body.message).toMatch(message);
}

/** The service child's memory, from /proc: resident now and the peak since it started (or since `resetPeak`). */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
}

/**
 * Resets the child's peak RSS to its RSS now (writing 5 to /proc/<pid>/clear_refs), so what comes
 * after is measured alone. False where the kernel does not allow it: then the peak is the lifetime one.
 */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** CPU time the child has used (user + system), in clock ticks. */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

/** grep -n, written out: the 1-based numbers and texts of the lines `test` accepts. */
const grepN = (text: string, test: (line: string) => boolean) =>
  text
    .split('\n')
    .slice(0, text.endsWith('\n') ? -1 : undefined)
    .flatMap((line, i) => (test(line) ? [{ line: i + 1, text: line }] : []));

/** Every matching line of a search, following nextOffset. */
async function searchAll(id: string, params: Record<string, string | number | boolean>) {
  const got: { line: number; text: string }[] = [];
  let total: number | undefined;
  let offset: number | null = 1;
  while (offset !== null) {
    const a = await get(`/v1/artifacts/${id}/search?${q({ ...params, offset, maxMatches: 500, budget: 1_000_000 })}`);
    expect(a.status, JSON.stringify(a.body).slice(0, 500)).toBe(200);
    total ??= a.body.totalMatches;
    got.push(...a.body.lines.filter((l: any) => l.match).map((l: any) => ({ line: l.line, text: l.text })));
    offset = a.body.nextOffset;
  }
  return { got, total };
}

/** Every line of a read, following nextOffset (lines shorter than the budget). */
async function readAll(path: string, budget = 5_000): Promise<string[]> {
  const lines: string[] = [];
  let offset: number | null = 1;
  while (offset !== null) {
    const sep = path.includes('?') ? '&' : '?';
    const a = await get(`${path}${sep}${q({ offset, budget })}`);
    expect(a.status, JSON.stringify(a.body).slice(0, 500)).toBe(200);
    expect(a.body.text.length).toBeLessThanOrEqual(budget);
    expect(a.body.nextColumn).toBeUndefined();
    lines.push(...a.body.lines);
    offset = a.body.nextOffset;
  }
  return lines;
}

/** A build log of `n` lines, ~100 characters each. */
const buildLog = (n: number) =>
  `${Array.from(
    { length: n },
    (_, i) => `[${String(i + 1).padStart(6, '0')}] INFO compiled module_${i % 31}.ts in ${i % 97} ms ${'.'.repeat(50)}`,
  ).join('\n')}\n`;

// ---------------------------------------------------------------------------------------------------

describe('ids: unknown, and another tenant’s', () => {
  it('answers another tenant’s id exactly as one that never existed, on /text, /search and /query', async () => {
    const id = await put('{"secret": "acme only"}\n', 'application/json', { 'X-Artifact-Filename': 'secret.json' });
    expect((await get(`/v1/artifacts/${id}/text`)).status).toBe(200);
    const never = `${id.slice(0, -6)}${id.endsWith('ffffff') ? 'eeeeee' : 'ffffff'}`;
    for (const view of ['text', 'search?pattern=secret', 'query?path=%24.secret']) {
      const foreign = await get(`/v1/artifacts/${id}/${view}`, rival);
      const missing = await get(`/v1/artifacts/${never}/${view}`, rival);
      const ownMissing = await get(`/v1/artifacts/${never}/${view}`, acme);
      expectError(foreign, 404, 'not_found', /not found in your scope/);
      expect(foreign.body.message).not.toContain('acme');
      // The same body, byte for byte once the id it names is the same.
      expect(JSON.stringify(foreign.body).replaceAll(id, '<id>')).toBe(
        JSON.stringify(missing.body).replaceAll(never, '<id>'),
      );
      expect(missing.body).toEqual(ownMissing.body);
    }
  });

  it('answers a malformed id with a clear error, not a crash', async () => {
    for (const bad of ['nope', 'art_', `art_${'x'.repeat(300)}`, '..%2F..%2Fetc%2Fpasswd']) {
      const a = await get(`/v1/artifacts/${bad}/text`);
      expect([400, 404], `${bad}: ${JSON.stringify(a.body)}`).toContain(a.status);
      expect(['bad_request', 'not_found']).toContain(a.body.code);
      expect(a.body.message.length).toBeGreaterThan(20);
    }
  });
});

describe('bad input to /text, /search and /query', () => {
  let log: string;
  let id: string;
  beforeAll(async () => {
    log = buildLog(5_000);
    id = await put(log, 'text/plain', { 'X-Artifact-Filename': 'build.log' });
  });

  it('a binary artifact has no lines: 415 on every view, with its type and artifact_url', async () => {
    const bin = await put(bytesOf(64 * 1024, 7), 'application/octet-stream', { 'X-Artifact-Filename': 'core.bin' });
    for (const view of ['text', 'text?offset=2&limit=5', 'search?pattern=ELF', 'query?path=%24']) {
      expectError(await get(`/v1/artifacts/${bin}/${view}`), 415, 'unsupported_type', /application\/octet-stream/);
      expect((await get(`/v1/artifacts/${bin}/${view}`)).body.message).toMatch(/artifact_url/);
    }
  });

  it('an offset past the end is 400 naming the line count, on /text and /search', async () => {
    const read = await get(`/v1/artifacts/${id}/text?offset=5001`);
    expectError(
      read,
      400,
      'bad_request',
      /past the end: there are 5,000 lines\. Read from an offset between 1 and 5000/,
    );
    const far = await get(`/v1/artifacts/${id}/text?offset=9999999999`);
    expectError(far, 400, 'bad_request', /5,000 lines/);
    const search = await get(`/v1/artifacts/${id}/search?pattern=INFO&offset=6000`);
    expectError(
      search,
      400,
      'bad_request',
      /past the end: there are 5,000 lines\. Search from an offset between 1 and 5000/,
    );
    // The last line is still there.
    const last = await get(`/v1/artifacts/${id}/text?offset=5000`);
    expect(last.status).toBe(200);
    expect(last.body.lines).toEqual([log.split('\n')[4999]]);
    expect(last.body.nextOffset).toBeNull();
  });

  it('limit 0 is 400; limit 10⁹ is 200, capped by the budget', async () => {
    expectError(await get(`/v1/artifacts/${id}/text?limit=0`), 400, 'bad_request', /limit must be a whole number/);
    expectError(await get(`/v1/artifacts/${id}/text?offset=0`), 400, 'bad_request', /offset must be a whole number/);
    expectError(await get(`/v1/artifacts/${id}/text?column=0`), 400, 'bad_request', /column/);
    for (const budget of [undefined, 1_000, 20_000]) {
      const a = await get(`/v1/artifacts/${id}/text?${q({ limit: 1_000_000_000, ...(budget ? { budget } : {}) })}`);
      expect(a.status).toBe(200);
      expect(a.body.text.length).toBeLessThanOrEqual(budget ?? 50_000);
      expect(a.body.lines.length).toBeGreaterThan(0);
      expect(a.body.lines.length).toBeLessThan(5_000);
      expect(a.body.nextOffset).toBe(1 + a.body.lines.length);
      expect(a.body.lines).toEqual(log.split('\n').slice(0, a.body.lines.length));
      expect(a.body.text).toContain(`"offset":${a.body.nextOffset}`);
    }
  });

  it('a budget outside 1,000–1,000,000 is 400 saying the range, on every view', async () => {
    const json = await put('{"a": 1}', 'application/json');
    for (const budget of [0, 999, 1_000_001, 9_999_999_999]) {
      for (const path of [
        `/v1/artifacts/${id}/text?budget=${budget}`,
        `/v1/artifacts/${id}/search?pattern=INFO&budget=${budget}`,
        `/v1/artifacts/${json}/query?path=%24.a&budget=${budget}`,
      ]) {
        expectError(
          await get(path),
          400,
          'bad_request',
          /budget must be a whole number of characters from 1,000 to 1,000,000/,
        );
      }
    }
    // Not a number at all: refused by the route's schema, still a 400 with a message.
    const word = await get(`/v1/artifacts/${id}/text?budget=lots`);
    expect(word.status).toBe(400);
    expect(word.body.code).toBe('bad_request');
  });

  it('maxMatches and context out of range, and bad patterns, are 400 with what to change', async () => {
    expectError(await get(`/v1/artifacts/${id}/search?pattern=INFO&maxMatches=0`), 400, 'bad_request', /maxMatches/);
    expectError(await get(`/v1/artifacts/${id}/search?pattern=INFO&maxMatches=501`), 400, 'bad_request', /1 to 500/);
    expectError(await get(`/v1/artifacts/${id}/search?pattern=INFO&context=21`), 400, 'bad_request', /context/);
    expectError(await get(`/v1/artifacts/${id}/search?pattern=`), 400, 'bad_request', /empty/);
    expectError(
      await get(`/v1/artifacts/${id}/search?${q({ pattern: '(a)\\1', regex: true })}`),
      400,
      'bad_request',
      /cannot run in linear time/,
    );
    expectError(
      await get(`/v1/artifacts/${id}/search?${q({ pattern: '(?=x)a', regex: true })}`),
      400,
      'bad_request',
      /lookahead .* and lookbehind with a capture group/,
    );
    expectError(
      await get(`/v1/artifacts/${id}/search?${q({ pattern: '(?<=(x))a', regex: true })}`),
      400,
      'bad_request',
      /lookbehind with a capture group/,
    );
    expectError(
      await get(`/v1/artifacts/${id}/search?${q({ pattern: '(unclosed', regex: true })}`),
      400,
      'bad_request',
      /Invalid regular expression/,
    );
  });

  it('an invalid JSONPath is 400 saying where, before anything is read', async () => {
    const doc = await put(JSON.stringify({ items: [{ title: 'a' }, { title: 'b' }] }), 'application/json');
    for (const path of ['$.items[', '$..[?(@.a', 'items', '$.items[?@.title ==]']) {
      const a = await get(`/v1/artifacts/${doc}/query?${q({ path })}`);
      expectError(a, 400, 'bad_request', /JSONPath/);
    }
    // The same path on a text artifact is refused for the path too (checked before the artifact).
    expectError(await get(`/v1/artifacts/${id}/query?${q({ path: '$.items[' })}`), 400, 'bad_request', /JSONPath/);
    // And a good one answers.
    const good = await get(`/v1/artifacts/${doc}/query?${q({ path: '$.items[*].title' })}`);
    expect(good.status).toBe(200);
    expect(good.body.matches.map((m: any) => m.value)).toEqual(['a', 'b']);
    // A text artifact that is no JSON is 422.
    expectError(await get(`/v1/artifacts/${id}/query?${q({ path: '$.a' })}`), 422, 'unprocessable');
  });

  it('(a+)+$ on long lines answers at once on the linear engine, matching as grep -E does', async () => {
    const text = `${'a'.repeat(60_000)}b\n${'a'.repeat(60_000)}\nxyz\n${'a'.repeat(100_000)}\n`;
    const long = await put(text, 'text/plain', { 'X-Artifact-Filename': 'aaaa.txt' });
    const hostile = await get(`/v1/artifacts/${long}/search?${q({ pattern: '(a+)+$', regex: true })}`);
    expect(hostile.status, JSON.stringify(hostile.body).slice(0, 300)).toBe(200);
    expect(hostile.body.totalMatches).toBe(1);
    expect(hostile.body.lines.map((l: any) => [l.line, l.match])).toEqual([[2, true]]);
    // Line 4 is over the 65,536 characters a regex runs over: left out, and the answer says so.
    expect(hostile.body.longLinesSkipped).toEqual({ count: 1, first: 4 });
    // A 60,000-character line is shown around its match, within the answer's budget.
    expect(hostile.body.text.length).toBeLessThanOrEqual(50_000);
    expect(hostile.body.lines[0].text).toMatch(/chars\]/);
    const none = await get(`/v1/artifacts/${long}/search?${q({ pattern: '(a|aa)+$', regex: true, offset: 1 })}`);
    expect(none.status).toBe(200);
    // The service is not stuck behind it.
    expect((await get(`/v1/artifacts/${id}/text?limit=1`)).status).toBe(200);
    console.info(`(a+)+$ over two 60,000-char lines: ${hostile.ms.toFixed(0)} ms; (a|aa)+$: ${none.ms.toFixed(0)} ms`);
  });

  it('page is for PDFs and entry for ZIPs: 400 on a text artifact', async () => {
    expectError(await get(`/v1/artifacts/${id}/text?page=2`), 400, 'bad_request', /page is for PDFs.*Leave page out/);
    expectError(await get(`/v1/artifacts/${id}/text?entry=a.txt`), 400, 'bad_request', /entry is for ZIP archives/);
    expectError(await get(`/v1/artifacts/${id}/search?pattern=a&page=2`), 400, 'bad_request', /page is for PDFs/);
  });
});

describe('PDFs through the service', () => {
  let report: string;
  beforeAll(async () => {
    report = await put(fixture('report.pdf'), 'application/pdf', { 'X-Artifact-Filename': 'report.pdf' });
  });

  it('reads report.pdf page 3: its known text, the page count', async () => {
    const a = await get(`/v1/artifacts/${report}/text?page=3`);
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ view: 'pdf', page: 3, pageCount: 4, offset: 1, nextOffset: null });
    expect(a.body.lines).toContain('Total revenue: 4,211,337 EUR');
    expect(a.body.text).toContain('page 3 of 4');
    expect(a.body.text).toContain(`artifact_read {"id":"${report}","page":4}`);
    for (const page of [1, 2, 4]) {
      const other = await get(`/v1/artifacts/${report}/text?page=${page}`);
      expect(other.status).toBe(200);
      expect(other.body.lines).not.toContain('Total revenue: 4,211,337 EUR');
    }
  });

  it("agrees with poppler's pdftotext -f N -l N on each page's words", async (ctx) => {
    if (!hasPdftotext) {
      ctx.skip(true, 'poppler-utils pdftotext is not installed (apt-get install -y poppler-utils)');
      return;
    }
    for (let page = 1; page <= 4; page++) {
      const a = await get(`/v1/artifacts/${report}/text?page=${page}`);
      expect(a.status).toBe(200);
      const reference = execFileSync(
        'pdftotext',
        ['-f', String(page), '-l', String(page), join(fixtures, 'report.pdf'), '-'],
        { encoding: 'utf8' },
      );
      expect(words(a.body.lines.join('\n')), `page ${page}`).toEqual(words(reference));
    }
  });

  it('finds the page-3 text by search, the line carrying page 3', async () => {
    const a = await get(`/v1/artifacts/${report}/search?${q({ pattern: '4,211,337 EUR' })}`);
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ view: 'pdf', pageCount: 4, totalMatches: 1, returnedMatches: 1 });
    expect(a.body.lines).toEqual([{ line: 2, page: 3, text: 'Total revenue: 4,211,337 EUR', match: true }]);
    expect(a.body.text).toContain('p3 ');
    // From page 4 on it is not there; regex and ignoreCase find it too.
    expect(
      (await get(`/v1/artifacts/${report}/search?${q({ pattern: '4,211,337', page: 4 })}`)).body.totalMatches,
    ).toBe(0);
    const ci = await get(
      `/v1/artifacts/${report}/search?${q({ pattern: 'total REVENUE: [0-9,]+', regex: true, ignoreCase: true })}`,
    );
    expect(ci.body.lines.map((l: any) => [l.page, l.line, l.match])).toEqual([[3, 2, true]]);
  });

  it('a page that does not exist is 400 naming the page count', async () => {
    expectError(
      await get(`/v1/artifacts/${report}/text?page=99`),
      400,
      'bad_request',
      /page 99 does not exist: report\.pdf \(application\/pdf, .+\) has 4 pages\. Ask for a page from 1 to 4\./,
    );
    expectError(await get(`/v1/artifacts/${report}/search?pattern=EUR&page=5`), 400, 'bad_request', /has 4 pages/);
    expectError(await get(`/v1/artifacts/${report}/text?page=0`), 400, 'bad_request', /page must be a whole number/);
    expectError(
      await get(`/v1/artifacts/${report}/text?page=3&offset=99`),
      400,
      'bad_request',
      /past the end: there are 3 lines/,
    );
    expectError(await get(`/v1/artifacts/${report}/query?path=%24`), 415, 'unsupported_type', /not JSON/);
  });

  it.each([
    ['truncated.pdf', /could not be parsed: .+\. The file may be damaged; download it with artifact_url instead\./],
    ['garbage.pdf', /could not be parsed: .+\. The file may be damaged; download it with artifact_url instead\./],
    ['encrypted.pdf', /encrypted with a password.*artifact_url/],
  ])('%s is 422 unprocessable, with what to do, and the service goes on', async (name, message) => {
    const id = await put(fixture(name), 'application/pdf', { 'X-Artifact-Filename': name });
    expectError(await get(`/v1/artifacts/${id}/text`), 422, 'unprocessable', message);
    expectError(await get(`/v1/artifacts/${id}/search?pattern=EUR`), 422, 'unprocessable', message);
    // Sniffed by its first bytes too, whatever type it was stored with (other bytes: a line end after it).
    const untyped = await put(new Uint8Array([...fixture(name), 0x0a]), 'application/octet-stream');
    expectError(await get(`/v1/artifacts/${untyped}/text?page=2`), 422, 'unprocessable', message);
    expect((await get(`/v1/artifacts/${report}/text?page=3`)).status).toBe(200);
  });

  it('font-inject.pdf answers (200 or 422) and neither payload runs', async () => {
    for (const marker of [FONT_PAYLOAD_MARKER, SCRIPT_PAYLOAD_MARKER]) rmSync(marker, { force: true });
    const id = await put(fixture('font-inject.pdf'), 'application/pdf', { 'X-Artifact-Filename': 'invoice.pdf' });
    const read = await get(`/v1/artifacts/${id}/text`);
    expect([200, 422], JSON.stringify(read.body)).toContain(read.status);
    if (read.status === 200) expect(read.body.lines.join('\n')).toContain('Font matrix payload test');
    else expectError(read, 422, 'unprocessable', /artifact_url/);
    const search = await get(`/v1/artifacts/${id}/search?pattern=payload`);
    expect([200, 422]).toContain(search.status);
    // The payloads would write these files from the service's process, whichever thread ran them.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(existsSync(FONT_PAYLOAD_MARKER), FONT_PAYLOAD_MARKER).toBe(false);
    expect(existsSync(SCRIPT_PAYLOAD_MARKER), SCRIPT_PAYLOAD_MARKER).toBe(false);
    expect((await get(`/v1/artifacts/${report}/text?page=1`)).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------------
// A Tableau packaged workbook (.twbx), built here: the workbook XML, an extract, an image.

const TWB = `${[
  "<?xml version='1.0' encoding='utf-8' ?>",
  "<workbook source-build='2024.1.0' version='18.1' xmlns:user='http://www.tableausoftware.com/xml/user'>",
  '  <datasources>',
  "    <datasource caption='Sales' inline='true' name='federated.sales' version='18.1'>",
  ...Array.from(
    { length: 400 },
    (_, i) =>
      `      <column caption='Measure ${i}' datatype='${i % 3 ? 'real' : 'integer'}' name='[Sales ${i}]' role='measure' type='quantitative' />`,
  ),
  '    </datasource>',
  '  </datasources>',
  "  <worksheets><worksheet name='Revenue by region — Q3 “final”' /></worksheets>",
  '</workbook>',
].join('\n')}\n`;
/** The 45 bytes of a 3×2 PNG (signature, IHDR, IDAT, IEND). */
const LOGO = new Uint8Array([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 3, 0, 0, 0, 2, 8, 2, 0,
  0, 0, 0x12, 0x16, 0xf1, 0x4d, 0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
]);

describe('a .twbx through the service', () => {
  let twbx: string;
  const names = ['Sales.twb', 'Data/', 'Data/Extracts/sales.hyper', 'Image/logo.png'];

  beforeAll(async () => {
    const writer = new ZipWriter(new Uint8ArrayWriter(), { useWebWorkers: false });
    await writer.add('Sales.twb', new TextReader(TWB));
    await writer.add('Data/', undefined, { directory: true });
    await writer.add('Data/Extracts/sales.hyper', new Uint8ArrayReader(bytesOf(2 * MiB, 11)), { level: 0 });
    await writer.add('Image/logo.png', new Uint8ArrayReader(LOGO));
    twbx = await put(await writer.close(), 'application/vnd.tableau.packaged-workbook', {
      'X-Artifact-Filename': 'sales.twbx',
    });
  });

  it('/text lists the entries, with sizes, and says how to read one', async () => {
    const a = await get(`/v1/artifacts/${twbx}/text`);
    expect(a.status).toBe(200);
    expect(a.body.view).toBe('zip');
    expect(a.body.totalLines).toBe(4);
    expect(a.body.lines.map((l: string) => l.split('  (')[0])).toEqual(names);
    expect(a.body.lines[2]).toMatch(/^Data\/Extracts\/sales\.hyper {2}\(2\.0 MiB\)$/);
    expect(a.body.text).toContain(`artifact_read {"id":"${twbx}","entry":"Sales.twb"}`);
  });

  it('/text?entry=Sales.twb reads it exactly, page after page', async () => {
    const lines = await readAll(`/v1/artifacts/${twbx}/text?entry=Sales.twb`, 5_000);
    expect(`${lines.join('\n')}\n`).toBe(TWB);
    const one = await get(`/v1/artifacts/${twbx}/text?${q({ entry: 'Sales.twb', offset: 100, limit: 2 })}`);
    expect(one.body).toMatchObject({
      entry: 'Sales.twb',
      offset: 100,
      nextOffset: 102,
      totalLines: TWB.split('\n').length - 1,
    });
    expect(one.body.lines).toEqual(TWB.split('\n').slice(99, 101));
  });

  it('/search?entry=Sales.twb finds what grep finds, fixed and regex', async () => {
    const cases: [Record<string, string | boolean>, (l: string) => boolean][] = [
      [{ pattern: "caption='Measure 1" }, (l) => l.includes("caption='Measure 1")],
      [{ pattern: "name='\\[Sales [0-9]*7\\]'", regex: true }, (l) => /name='\[Sales [0-9]*7\]'/.test(l)],
      [{ pattern: 'DATATYPE=.INTEGER', regex: true, ignoreCase: true }, (l) => /datatype=.integer/i.test(l)],
      [{ pattern: '“final”' }, (l) => l.includes('“final”')],
    ];
    for (const [params, test] of cases) {
      const truth = grepN(TWB, test);
      expect(truth.length, JSON.stringify(params)).toBeGreaterThan(0);
      const { got, total } = await searchAll(twbx, { ...params, entry: 'Sales.twb' });
      expect(total, JSON.stringify(params)).toBe(truth.length);
      expect(got, JSON.stringify(params)).toEqual(truth);
    }
  });

  it('an unknown entry is 400 naming the closest ones; a folder is 400', async () => {
    expectError(
      await get(`/v1/artifacts/${twbx}/text?entry=Sales.twbb`),
      400,
      'bad_request',
      /No entry "Sales\.twbb" in this archive.*"Sales\.twb"/,
    );
    expectError(
      await get(`/v1/artifacts/${twbx}/search?entry=logo.png&pattern=x`),
      400,
      'bad_request',
      /"Image\/logo\.png"/,
    );
    expectError(await get(`/v1/artifacts/${twbx}/text?entry=Data%2F`), 400, 'bad_request', /is a folder/);
  });

  it('a binary entry is 415, pointing at artifact_url', async () => {
    for (const entry of ['Data/Extracts/sales.hyper', 'Image/logo.png']) {
      expectError(
        await get(`/v1/artifacts/${twbx}/text?${q({ entry })}`),
        415,
        'unsupported_type',
        /is binary .*artifact_url/,
      );
      expectError(await get(`/v1/artifacts/${twbx}/search?${q({ entry, pattern: 'x' })}`), 415, 'unsupported_type');
    }
    // A JSONPath over the XML entry is not JSON: 422, and without an entry the archive says to name one.
    expectError(
      await get(`/v1/artifacts/${twbx}/query?${q({ path: '$' })}`),
      415,
      'unsupported_type',
      /Name a JSON entry/,
    );
    expectError(await get(`/v1/artifacts/${twbx}/query?${q({ path: '$', entry: 'Sales.twb' })}`), 422, 'unprocessable');
  });
});

describe('ZIP bombs', () => {
  it('an entry of 10 GiB is 422 at once, the process stays small, and the service goes on', async () => {
    // 10 GiB of zeros in ~10 MiB of deflate, declared honestly (ZIP64 sizes).
    const zeros = rawZip([
      {
        name: 'readme.txt',
        data: new TextEncoder().encode('hello\n'),
        method: 0,
        declaredSize: 6,
        crc: crc32('hello\n'),
      },
      { name: 'Data/zeros.bin', data: zerosDeflated(10 * 1024), method: 8, declaredSize: 10 * GiB },
    ]);
    // The same 10 GiB, of text lines, with a header that lies (64 MiB, within the cap): only what
    // comes out of the inflater can stop it.
    const textBomb = rawZip([
      {
        name: 'Data/log.csv',
        data: repeatedDeflated(mibOfText('2024-05-01,region-7,1204118,EUR,ok\n'), 10 * 1024),
        method: 8,
        declaredSize: 64 * MiB,
      },
    ]);
    // The same zeros behind a lying header: their first bytes are binary.
    const lyingZeros = rawZip([
      { name: 'Data/zeros.csv', data: zerosDeflated(10 * 1024), method: 8, declaredSize: 64 * MiB },
    ]);
    const ids = {
      zeros: await put(zeros, 'application/zip', { 'X-Artifact-Filename': 'zeros.zip' }),
      text: await put(textBomb, 'application/zip', { 'X-Artifact-Filename': 'log.zip' }),
      lying: await put(lyingZeros, 'application/zip', { 'X-Artifact-Filename': 'lying.zip' }),
    };
    const small = await put('still here\n', 'text/plain');

    const pid = srv.proc.pid!;
    const reset = resetPeak(pid);
    const before = memoryOf(pid);

    // Listing reads only the directory: the 10 GiB is shown, nothing is inflated.
    const listing = await get(`/v1/artifacts/${ids.zeros}/text`);
    expect(listing.status).toBe(200);
    expect(listing.body.lines).toEqual([
      'readme.txt  (6 B)',
      expect.stringMatching(/^Data\/zeros\.bin {2}\(10 GiB, 10(\.\d)? MiB packed\)$/),
    ]);

    const declared = await get(`/v1/artifacts/${ids.zeros}/text?entry=Data%2Fzeros.bin`);
    expectError(
      declared,
      422,
      'unprocessable',
      /^The entry Data\/zeros\.bin expands past 64 MiB \(a ZIP bomb, or too large to read here\); download the archive with artifact_url\.$/,
    );
    expect(declared.body.details).toMatchObject({ entry: 'Data/zeros.bin', limitBytes: 64 * MiB });
    const declaredSearch = await get(`/v1/artifacts/${ids.zeros}/search?entry=Data%2Fzeros.bin&pattern=x`);
    expectError(declaredSearch, 422, 'unprocessable', /expands past 64 MiB/);

    const lied = await get(`/v1/artifacts/${ids.text}/text?entry=Data%2Flog.csv`);
    expectError(
      lied,
      422,
      'unprocessable',
      /^The entry Data\/log\.csv does not expand to the 64 MiB the archive declares.*artifact_url\.$/,
    );
    const liedSearch = await get(`/v1/artifacts/${ids.text}/search?entry=Data%2Flog.csv&pattern=region-8`);
    expectError(liedSearch, 422, 'unprocessable', /64 MiB/);

    // Zeros behind a lie: the first inflated bytes show a binary entry, and nothing more is inflated.
    const binary = await get(`/v1/artifacts/${ids.lying}/text?entry=Data%2Fzeros.csv`);
    expectError(binary, 415, 'unsupported_type', /is binary/);

    const after = memoryOf(pid);
    const growth = after.hwm - (reset ? before.rss : before.hwm);
    console.info(
      `ZIP bombs: declared 10 GiB ${declared.ms.toFixed(0)} ms, lying 64 MiB (10 GiB inside) ${lied.ms.toFixed(0)} ms ` +
        `(search ${liedSearch.ms.toFixed(0)} ms), binary ${binary.ms.toFixed(0)} ms; service RSS ${mib(before.rss)} → ` +
        `${mib(after.rss)}, peak ${mib(after.hwm)} (${reset ? 'peak reset before' : 'lifetime peak'}), growth ${mib(growth)}`,
    );
    expect(growth).toBeLessThan(256 * MiB);

    // The service goes on: another artifact, and the archive's harmless entry.
    const next = await get(`/v1/artifacts/${small}/text`);
    expect(next.status).toBe(200);
    expect(next.body.lines).toEqual(['still here']);
    const readme = await get(`/v1/artifacts/${ids.zeros}/text?entry=readme.txt`);
    expect(readme.status, JSON.stringify(readme.body)).toBe(200);
    expect(readme.body.lines).toEqual(['hello']);
  }, 120_000);
});

describe('other requests while a costly one runs', () => {
  it('20 small reads all answer before a PDF that takes seconds to parse', async () => {
    const costly = await put(slowPdf(60), 'application/pdf', { 'X-Artifact-Filename': 'costly.pdf' });
    const log = buildLog(2_000);
    const small = await put(log, 'text/plain', { 'X-Artifact-Filename': 'small.log' });
    const json = await put(JSON.stringify({ a: [1, 2, 3] }), 'application/json');
    // Warm: the small artifact's line index exists, the connection is open.
    expect((await get(`/v1/artifacts/${small}/text?limit=5`)).status).toBe(200);

    const pid = srv.proc.pid!;
    const ticks = cpuTicks(pid);
    const began = performance.now();
    const slow = get(`/v1/artifacts/${costly}/text?page=60&limit=3`);
    // The service is at work on it (its CPU time has moved on) before the small reads start.
    while (cpuTicks(pid) - ticks < 20 && performance.now() - began < 10_000) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const latencies: number[] = [];
    const finished: number[] = [];
    for (let i = 0; i < 20; i++) {
      const offset = 1 + i * 97;
      const a = await get(`/v1/artifacts/${small}/text?${q({ offset, limit: 10 })}`);
      expect(a.status).toBe(200);
      expect(a.body.lines).toEqual(log.split('\n').slice(offset - 1, offset + 9));
      latencies.push(a.ms);
      finished.push(a.doneAt);
    }
    // For information: a JSONPath query goes to the same worker thread as the PDF.
    const query = get(`/v1/artifacts/${json}/query?path=%24.a`);
    const done = await slow;
    const queried = await query;
    // 200, or 422 if this machine is so slow that the 20 s limit stopped it: an answer either way.
    expect([200, 422], JSON.stringify(done.body).slice(0, 300)).toContain(done.status);
    if (done.status === 200) {
      expect(done.body).toMatchObject({ page: 60, pageCount: 60 });
      expect(done.body.lines).toEqual(['run 0 of a costly page', 'run 1 of a costly page', 'run 2 of a costly page']);
    }
    expect(queried.status).toBe(200);
    const sorted = [...latencies].sort((a, b) => a - b);
    console.info(
      `costly PDF (60 pages): ${done.status} in ${done.ms.toFixed(0)} ms; 20 small reads during it: ` +
        `min ${sorted[0]!.toFixed(1)} / median ${sorted[10]!.toFixed(1)} / max ${sorted[19]!.toFixed(1)} ms ` +
        `[${latencies.map((l) => l.toFixed(1)).join(', ')}]; the last answered ${(done.doneAt - Math.max(...finished)).toFixed(0)} ms ` +
        `before the PDF; a JSONPath query sent after them answered ${(queried.doneAt - done.doneAt).toFixed(0)} ms after the PDF (${queried.ms.toFixed(0)} ms)`,
    );
    for (const at of finished) expect(at).toBeLessThan(done.doneAt);
  }, 120_000);

  // One exec of a regex cannot be interrupted, and a hostile one ends on V8's linear engine at ~1 µs a
  // character: lines over 64 Ki characters are left out of a regex search, and a search that has held the
  // event loop for 20 ms lets other requests run before its next span. So a search over many long
  // hostile lines takes seconds, and small reads keep answering while it runs.
  it('small reads keep answering while a hostile regex search over 200 long lines runs', async () => {
    const lines = Array.from({ length: 200 }, () => `${'a'.repeat(60_000)}b`).join('\n');
    const hostile = await put(`${lines}\n`, 'text/plain', { 'X-Artifact-Filename': 'long-lines.txt' });
    const small = await put(buildLog(2_000), 'text/plain', { 'X-Artifact-Filename': 'small2.log' });
    expect((await get(`/v1/artifacts/${small}/text?limit=5`)).status).toBe(200);
    expect((await get(`/v1/artifacts/${hostile}/text?limit=1&budget=1000`)).status).toBe(200);

    const pid = srv.proc.pid!;
    const ticks = cpuTicks(pid);
    const began = performance.now();
    let searching = true;
    const slow = get(`/v1/artifacts/${hostile}/search?${q({ pattern: '(a+)+$', regex: true })}`).finally(() => {
      searching = false;
    });
    while (cpuTicks(pid) - ticks < 20 && performance.now() - began < 10_000) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Reads one after another for as long as the search runs (20 at most): each must answer while it
    // runs, not queue behind it.
    const latencies: number[] = [];
    const answeredDuring: boolean[] = [];
    for (let i = 0; i < 20 && searching; i++) {
      const a = await get(`/v1/artifacts/${small}/text?${q({ offset: 1 + i * 97, limit: 10 })}`);
      expect(a.status).toBe(200);
      latencies.push(a.ms);
      answeredDuring.push(searching);
    }
    const done = await slow;
    // It finishes (no match), or a slow machine reaches the search's time limit: either way an answer.
    expect([200, 400], JSON.stringify(done.body).slice(0, 300)).toContain(done.status);
    if (done.status === 200) expect(done.body.totalMatches).toBe(0);
    console.info(
      `(a+)+$ over 200 lines of 60,000 characters: ${done.ms.toFixed(0)} ms (${done.status}); ${latencies.length} small reads during it: [${latencies.map((l) => l.toFixed(1)).join(', ')}] ms`,
    );
    // Every read but the last one issued answered before the search did; a search that a read had to
    // wait for would have finished first.
    expect(answeredDuring.length).toBeGreaterThanOrEqual(2);
    expect(answeredDuring.slice(0, -1).every(Boolean)).toBe(true);
  }, 120_000);
});
