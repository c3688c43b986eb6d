/**
 * MCP transform figures in a process of their own, so the memory it measures is the transform's and
 * not the bench's. Run with --expose-gc. Prints one JSON line.
 *
 *   mcp-child.ts <warmups> <runs>
 *     Builds a Tableau download_workbook result: one text block of 10 MiB of JSON holding a 7 MiB PDF
 *     as base64 next to ordinary rows. Then the bare cost (JSON.parse + base64 decode + sha256 of the
 *     same payload) and transformToolResult into an in-memory store take turns, <warmups> times each
 *     unrecorded, then <runs> times each. Prints {"inputChars", "pdfBytes", "bare", "transform",
 *     "charsBefore", "charsAfter", "artifacts"}; bare and transform are lists of {"ms", "extraMiB"}.
 *     Then the same turns again with no gc() between runs (natural GC): "natural" = {"bare", "transform"},
 *     lists of ms.
 *
 * Peak extra memory: before each run a full gc(), a short pause and another gc() leave only live
 * data (the input, the PDF kept for the check), then writing "5" to /proc/self/clear_refs resets
 * the kernel's RSS high-water mark (VmHWM) to the current RSS (Linux 4.0+). After the run, VmHWM
 * minus the RSS at the reset is the run's peak extra memory. The kernel brings VmHWM up to RSS
 * before anything lowers RSS (and when it is read), so the peak inside one synchronous call
 * (JSON.parse, the base64 decode, a copy) is caught exactly; sampling process.memoryUsage() on a timer would miss it, since timers do
 * not fire during synchronous work, and samples taken between steps see only what is still alive
 * there. RSS counts the V8 heap, strings, ArrayBuffers and malloc'd memory alike, garbage not yet
 * collected included (it occupies memory all the same). Memory the process still holds from earlier
 * runs is reused without raising RSS: V8's young generation stays mapped after gc(), and glibc
 * keeps freed buffers on its heap unless MALLOC_MMAP_THRESHOLD_ is set, as bench/mcp.ts does for
 * the child whose memory it reports. So this is the cost of one more call in a warm process. The
 * bare runs are measured the same way.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createInMemoryArtifactStore } from '../src/client/index.js';
import { transformToolResult } from '../src/mcp/index.js';
import { rotate } from './stats.js';
import { runChild } from './children.js';
import { makePdf, workbookText } from './tableau-result.js';

const TOOL = 'download_workbook';
const SERVER = 'tableau';

const gc = (globalThis as { gc?: () => void }).gc;

interface Run {
  ms: number;
  extraMiB: number;
}

function statusKiB(field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
  if (!m) throw new Error(`no ${field} in /proc/self/status`);
  return Number(m[1]);
}

/**
 * V8 returns the pages of a collected large object (the last run's 9 MiB string) from a background
 * thread. Without this pause they were now and then still resident at the reset and released during
 * the next run, which hid that much of its growth.
 */
async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 50));
  gc!();
}

/** Runs `fn` from a clean heap; returns its time and the peak RSS above the RSS it started from. */
async function measured<T>(fn: () => Promise<T>): Promise<{ value: T; run: Run }> {
  gc!();
  await settle();
  writeFileSync('/proc/self/clear_refs', '5');
  const startKiB = statusKiB('VmRSS');
  const started = performance.now();
  const value = await fn();
  const ms = performance.now() - started;
  const peakKiB = statusKiB('VmHWM');
  return { value, run: { ms, extraMiB: (peakKiB - startKiB) / 1024 } };
}

async function main() {
  const [warmups, runs] = process.argv.slice(2).map(Number);
  if (!Number.isInteger(warmups) || !Number.isInteger(runs) || runs! < 1)
    throw new Error('usage: mcp-child.ts <warmups> <runs>');
  if (!gc) throw new Error('mcp-child.ts needs node --expose-gc');

  const pdf = await makePdf();
  const pdfSha256 = createHash('sha256').update(pdf).digest('hex');
  const text = workbookText(pdf.toString('base64'));
  const input = { content: [{ type: 'text', text }] };

  const bare = async () => {
    const doc = JSON.parse(text) as { content: string };
    const bytes = Buffer.from(doc.content, 'base64');
    return createHash('sha256').update(bytes).digest('hex');
  };

  const transform = async () => {
    const store = createInMemoryArtifactStore();
    const { value: out, run } = await measured(() => transformToolResult(TOOL, input, { store, serverName: SERVER }));
    // The check runs after the measurement: the stored bytes must be the PDF, byte for byte.
    const refs = out.artifacts.filter((a) => a.mimeType === 'application/pdf');
    if (refs.length !== 1)
      throw new Error(
        `the transform stored ${refs.length} PDF artifact(s), not 1 (artifacts: ${out.artifacts.map((a) => `${a.mimeType} ${a.sizeBytes} B`).join(', ') || 'none'})`,
      );
    const stored = await store.get(refs[0]!.id);
    if (!stored || !Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength).equals(pdf)) {
      throw new Error(
        `the stored artifact ${refs[0]!.id} is not the PDF: ${stored ? `${stored.byteLength} bytes that differ` : 'nothing came back'}`,
      );
    }
    if (refs[0]!.sha256 !== pdfSha256)
      throw new Error(`the stored PDF's sha256 is ${refs[0]!.sha256}, not ${pdfSha256}`);
    if (!JSON.stringify(out.result).includes(refs[0]!.id))
      throw new Error('the observation does not name the stored PDF');
    return { run, stats: out.stats, artifacts: out.artifacts.length };
  };

  const figures = { bare: [] as Run[], transform: [] as Run[] };
  let last: Awaited<ReturnType<typeof transform>> | undefined;
  for (let i = 0; i < warmups! + runs!; i++) {
    const record = i >= warmups!;
    await rotate(i, [
      async () => {
        const { value: digest, run } = await measured(bare);
        if (digest !== pdfSha256) throw new Error(`the bare run hashed ${digest}, not the PDF's ${pdfSha256}`);
        if (record) figures.bare.push(run);
      },
      async () => {
        last = await transform();
        if (record) figures.transform.push(last.run);
      },
    ]);
  }
  // Natural GC: the same calls back to back, no gc() between them, so each pays for the garbage the
  // one before left, as a busy process does. Times only.
  const natural = { bare: [] as number[], transform: [] as number[] };
  for (let i = 0; i < warmups! + runs!; i++) {
    const record = i >= warmups!;
    await rotate(i, [
      async () => {
        const started = performance.now();
        await bare();
        if (record) natural.bare.push(performance.now() - started);
      },
      async () => {
        const started = performance.now();
        await transformToolResult(TOOL, input, { store: createInMemoryArtifactStore(), serverName: SERVER });
        if (record) natural.transform.push(performance.now() - started);
      },
    ]);
  }
  return {
    inputChars: text.length,
    pdfBytes: pdf.length,
    ...figures,
    natural,
    charsBefore: last!.stats.charsBefore,
    charsAfter: last!.stats.charsAfter,
    artifacts: last!.artifacts,
  };
}

runChild(main);
