/**
 * The view sandbox: PDF text and JSONPath queries on a worker thread (src/node/view-sandbox.ts), and
 * inline where there are no threads (src/service/views/inline-sandbox.ts). Stored files are hostile
 * input: damaged, encrypted and code-carrying PDFs, documents that take too long or too much memory.
 */
import { hasPdftotext, slowPdf, words } from './helpers/pdfs.js';
import { type ChildProcessWithoutNullStreams, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArtifactError } from '../src/core/errors.js';
import { createNodeViewSandbox } from '../src/node/view-sandbox.js';
import { createInlineViewSandbox } from '../src/service/views/inline-sandbox.js';
import type { ViewSandbox } from '../src/service/views/sandbox.js';
import { spawnProcess, stopProcess } from './helpers/processes.js';
import { FONT_PAYLOAD_MARKER, SCRIPT_PAYLOAD_MARKER } from './fixtures/views/make-fixtures.js';

const fixtures = fileURLToPath(new URL('./fixtures/views/', import.meta.url));
const fixture = (name: string) => new Uint8Array(readFileSync(join(fixtures, name)));
const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

/** The ArtifactError a promise rejects with. */
async function refusal(promise: Promise<unknown>): Promise<ArtifactError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ArtifactError);
  return err as ArtifactError;
}

/** Runs `work` while a 10 ms interval ticks on this thread; the longest gap between ticks, and how long `work` took. */
async function whileTicking<T>(work: () => Promise<T>): Promise<{ result: T; maxGapMs: number; tookMs: number }> {
  let last = performance.now();
  let maxGapMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    maxGapMs = Math.max(maxGapMs, now - last);
    last = now;
  }, 10);
  const began = performance.now();
  try {
    const result = await work();
    return { result, maxGapMs, tookMs: performance.now() - began };
  } finally {
    clearInterval(timer);
  }
}

describe('node view sandbox: PDF text', () => {
  let sandbox: ViewSandbox;
  beforeAll(() => {
    sandbox = createNodeViewSandbox();
  });
  afterAll(() => sandbox.close());

  it("reads report.pdf page by page: each page's own text, one visual line per line", async () => {
    const { pageCount, pages } = await sandbox.pdfText(fixture('report.pdf'));
    expect(pageCount).toBe(4);
    expect(pages).toHaveLength(4);
    for (const page of pages) expect(page.endsWith('\n')).toBe(true);
    const known = [
      'Quarterly Report Q3 2024',
      'Nordics 1,204,118 EUR',
      'Total revenue: 4,211,337 EUR',
      'Appendix: glossary',
    ];
    known.forEach((text, i) => {
      expect(pages[i]!.split('\n')).toContain(text);
      pages.forEach((other, j) => {
        if (j !== i) expect(other).not.toContain(text);
      });
    });
    expect(pages[2]).toBe('Summary\nTotal revenue: 4,211,337 EUR\nOperating margin: 17.4 percent\n');
  });

  it.skipIf(!hasPdftotext)("agrees with poppler's pdftotext on every page's words", async () => {
    const { pages } = await sandbox.pdfText(fixture('report.pdf'));
    pages.forEach((page, i) => {
      const n = String(i + 1);
      const reference = execFileSync('pdftotext', ['-f', n, '-l', n, join(fixtures, 'report.pdf'), '-'], {
        encoding: 'utf8',
      });
      expect(words(page)).toEqual(words(reference));
    });
  });

  it('extracts the first maxPdfPages pages and says how many there are', async () => {
    const small = createNodeViewSandbox({ maxPdfPages: 2 });
    try {
      const { pageCount, pages } = await small.pdfText(fixture('report.pdf'));
      expect(pageCount).toBe(4);
      expect(pages).toHaveLength(2);
    } finally {
      await small.close();
    }
  });

  it("leaves the caller's buffer as it was", async () => {
    const bytes = fixture('report.pdf');
    const copy = bytes.slice();
    await sandbox.pdfText(bytes);
    expect(bytes.byteLength).toBe(copy.byteLength);
    expect(Buffer.from(bytes).equals(Buffer.from(copy))).toBe(true);
  });

  it.each([
    ['truncated.pdf', /could not be parsed: .+\. The file may be damaged; download it with artifact_url instead\./],
    ['garbage.pdf', /could not be parsed: .+\. The file may be damaged; download it with artifact_url instead\./],
    ['encrypted.pdf', /encrypted with a password.*artifact_url/],
  ])('refuses %s as unprocessable, with what to do', async (name, message) => {
    const err = await refusal(sandbox.pdfText(fixture(name)));
    expect(err.code).toBe('unprocessable');
    expect(err.status).toBe(422);
    expect(err.message).toMatch(message);
  });

  it('refuses bytes that are no PDF at all', async () => {
    const err = await refusal(sandbox.pdfText(new TextEncoder().encode('hello, world')));
    expect(err.code).toBe('unprocessable');
  });

  it('never runs the code a font matrix (CVE-2024-4367) or document JavaScript carries', async () => {
    for (const marker of [FONT_PAYLOAD_MARKER, SCRIPT_PAYLOAD_MARKER]) rmSync(marker, { force: true });
    // The payloads would write these files: visible from here, whichever thread ran them.
    const answer = await sandbox.pdfText(fixture('font-inject.pdf')).then(
      (text) => ({ text }),
      (err: unknown) => ({ err }),
    );
    if ('text' in answer) expect(answer.text.pages[0]).toContain('Font matrix payload test');
    else expect((answer.err as ArtifactError).code).toBe('unprocessable');
    expect(existsSync(FONT_PAYLOAD_MARKER)).toBe(false);
    expect(existsSync(SCRIPT_PAYLOAD_MARKER)).toBe(false);
    // And the sandbox goes on serving.
    expect((await sandbox.pdfText(fixture('report.pdf'))).pageCount).toBe(4);
  });

  it('keeps the event loop serving while a long extraction runs', async () => {
    const pdf = slowPdf(20);
    const { result, maxGapMs, tookMs } = await whileTicking(() => sandbox.pdfText(pdf));
    expect(result.pageCount).toBe(20);
    expect(result.pages[0]!.split('\n')).toHaveLength(2001);
    // Not blocked for the job's length (a loop that ran the job would show one gap of all of it).
    expect(maxGapMs).toBeLessThan(tookMs / 2);
  });
});

describe('node view sandbox: limits', () => {
  it('stops a job over its timeout (unprocessable), and the next job runs on a fresh worker', async () => {
    const sandbox = createNodeViewSandbox({ timeoutMs: 1500 });
    try {
      // Warm: the worker is started and pdf.js loaded (loading is not the job's time).
      expect((await sandbox.pdfText(fixture('report.pdf'))).pageCount).toBe(4);
      const began = performance.now();
      // About 10 s of work, stopped at 1.5 s.
      const err = await refusal(sandbox.pdfText(slowPdf(100)));
      expect(err.code).toBe('unprocessable');
      expect(err.message).toMatch(/longer than 1500 ms.*artifact_url/);
      expect(performance.now() - began).toBeLessThan(8_000);
      expect((await sandbox.pdfText(fixture('report.pdf'))).pages[2]).toContain('Total revenue: 4,211,337 EUR');
      expect((await sandbox.jsonQuery('k', async () => encode({ a: 1 }), '$.a', 1000)).totalMatches).toBe(1);
    } finally {
      await sandbox.close();
    }
  });

  it('refuses a JSON document over the heap limit (unprocessable); queued and later jobs still run', async () => {
    const sandbox = createNodeViewSandbox({ maxHeapBytes: 64 * 1024 * 1024 });
    try {
      // Warm: the worker has loaded its code (a worker that cannot load it is not the document's fault).
      expect((await sandbox.jsonQuery('warm', async () => encode([1]), '$[0]', 1000)).totalMatches).toBe(1);
      // About 40 MB of JSON: 1.5 million small objects, far more than 64 MiB once parsed.
      const big = `[${Array(1_500_000).fill('{"id":12345,"name":"abcdef"}').join(',')}]`;
      let reads = 0;
      const bytes = async () => {
        reads++;
        return new TextEncoder().encode(big);
      };
      const tooBig = sandbox.jsonQuery('big', bytes, '$[0].id', 1000);
      const queued = sandbox.jsonQuery('small', async () => encode({ ok: [true] }), '$.ok[0]', 1000);
      const err = await refusal(tooBig);
      expect(err.code).toBe('unprocessable');
      expect(err.message).toMatch(/needed more memory than the 64 MiB allowed/);
      // Tried twice: the worker it first died on held another document, the second one held none.
      expect(reads).toBe(2);
      expect((await queued).matches[0]?.value).toBe(true);
      expect((await sandbox.pdfText(fixture('report.pdf'))).pageCount).toBe(4);
    } finally {
      await sandbox.close();
    }
  });

  it('does not keep the process alive while idle (a script that never closes it exits)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'view-sandbox-'));
    try {
      const script = join(dir, 'once.mts');
      const module = fileURLToPath(new URL('../src/node/view-sandbox.ts', import.meta.url));
      writeFileSync(
        script,
        `import { readFileSync } from 'node:fs';
import { createNodeViewSandbox } from ${JSON.stringify(module)};
const sandbox = createNodeViewSandbox();
const { pages } = await sandbox.pdfText(readFileSync(${JSON.stringify(join(fixtures, 'report.pdf'))}));
console.log(pages[2].trim().split('\\n')[1]);
`,
      );
      // As the service runs: node --import tsx. The answer arrives (a busy worker keeps the process
      // alive), then the process exits though the sandbox was never closed.
      const child = spawnProcess<ChildProcessWithoutNullStreams>(process.execPath, ['--import', 'tsx', script], {
        cwd: process.cwd(),
      });
      let out = '';
      child.stdout.on('data', (chunk) => {
        out += chunk;
      });
      const code = await new Promise<number | null>((resolve) => {
        const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.on('exit', (c) => {
          clearTimeout(kill);
          resolve(c);
        });
      });
      // Whatever it started (tsx's esbuild service) goes with it.
      await stopProcess(child);
      expect(out.trim()).toBe('Total revenue: 4,211,337 EUR');
      expect(code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses jobs after close', async () => {
    const sandbox = createNodeViewSandbox();
    await sandbox.pdfText(fixture('report.pdf'));
    await sandbox.close();
    const err = await refusal(sandbox.pdfText(fixture('report.pdf')));
    expect(err.code).toBe('backend_unavailable');
  });
});

describe('node view sandbox: JSON queries', () => {
  let sandbox: ViewSandbox;
  beforeAll(() => {
    sandbox = createNodeViewSandbox({}, { idleMs: 500 });
  });
  afterAll(() => sandbox.close());

  const doc = {
    issues: [
      { number: 41, title: 'first' },
      { number: 42, title: 'second' },
    ],
  };

  it('answers a query, and a second one on the same key without reading the bytes again', async () => {
    let reads = 0;
    const bytes = async () => {
      reads++;
      return encode(doc);
    };
    const first = await sandbox.jsonQuery('sha-a', bytes, '$.issues[?@.number == 42].title', 1000);
    expect(first.totalMatches).toBe(1);
    expect(first.matches[0]).toMatchObject({ value: 'second' });
    const second = await sandbox.jsonQuery('sha-a', bytes, '$.issues[*].number', 1000);
    expect(second.matches.map((m) => m.value)).toEqual([41, 42]);
    expect(reads).toBe(1);
  });

  it('sends the bytes again once the worker that held the document is gone (idle)', async () => {
    let reads = 0;
    const bytes = async () => {
      reads++;
      return encode(doc);
    };
    await sandbox.jsonQuery('sha-b', bytes, '$.issues[0].title', 1000);
    await sandbox.jsonQuery('sha-b', bytes, '$.issues[0].title', 1000);
    expect(reads).toBe(1);
    // The worker leaves after 500 ms without a job, and its documents with it.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const again = await sandbox.jsonQuery('sha-b', bytes, '$.issues[1].title', 1000);
    expect(again.matches[0]?.value).toBe('second');
    expect(reads).toBe(2);
  });

  it('moves a large buffer to the worker instead of copying it', async () => {
    const large = encode({ items: Array.from({ length: 20_000 }, (_, i) => ({ i })) });
    expect(large.byteLength).toBeGreaterThan(64 * 1024);
    const answer = await sandbox.jsonQuery('sha-large', async () => large, '$.items[19999].i', 1000);
    expect(answer.matches[0]?.value).toBe(19_999);
    expect(large.byteLength).toBe(0);
  });

  it('refuses invalid JSON as unprocessable, naming where it fails', async () => {
    const bytes = async () => new TextEncoder().encode('{"a": 1,\n "b": [1,,2]}');
    const err = await refusal(sandbox.jsonQuery('sha-bad', bytes, '$.a', 1000));
    expect(err.code).toBe('unprocessable');
    expect(err.message).toContain('line 2, column 10');
  });

  it('refuses a malformed path before reading any bytes', async () => {
    let reads = 0;
    const err = await refusal(
      sandbox.jsonQuery(
        'sha-c',
        async () => {
          reads++;
          return encode(doc);
        },
        '$.issues[?',
        1000,
      ),
    );
    expect(err.code).toBe('bad_request');
    expect(reads).toBe(0);
  });

  it('keeps the event loop serving while a large document is parsed and queried', async () => {
    const big = new TextEncoder().encode(
      JSON.stringify({ rows: Array.from({ length: 600_000 }, (_, i) => ({ i, tag: `t${i % 97}` })) }),
    );
    const { result, maxGapMs, tookMs } = await whileTicking(() =>
      sandbox.jsonQuery('sha-big', async () => big, '$.rows[?@.tag == "t5"].i', 200),
    );
    expect(result.totalMatches).toBeGreaterThan(6000);
    expect(maxGapMs).toBeLessThan(tookMs / 2);
  });
});

describe('inline view sandbox (no threads)', () => {
  it('answers JSON queries inline, keeping the last document', async () => {
    const sandbox = createInlineViewSandbox();
    let reads = 0;
    const bytes = async () => {
      reads++;
      return encode({ a: [1, 2, 3] });
    };
    expect((await sandbox.jsonQuery('k', bytes, '$.a[*]', 1000)).totalMatches).toBe(3);
    expect((await sandbox.jsonQuery('k', bytes, '$.a[0]', 1000)).matches[0]?.value).toBe(1);
    expect(reads).toBe(1);
    const err = await refusal(sandbox.jsonQuery('bad', async () => new TextEncoder().encode('[1,]'), '$', 1000));
    expect(err.code).toBe('unprocessable');
    expect(err.message).toContain('line 1, column 4');
    await sandbox.close();
  });

  it('refuses PDF text as unsupported_type, pointing to artifact_url', async () => {
    const err = await refusal(createInlineViewSandbox().pdfText(fixture('report.pdf')));
    expect(err.code).toBe('unsupported_type');
    expect(err.status).toBe(415);
    expect(err.message).toMatch(
      /^PDF text is not available on this deployment \(Cloudflare Workers\): .*use artifact_url/,
    );
  });
});
