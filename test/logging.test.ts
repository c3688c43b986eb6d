import { execFile } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { createJsonLogger } from '../src/core/logger.js';
import { batchedLines } from '../src/node/log-lines.js';

const nextTurn = () => new Promise((r) => setImmediate(r));
/** A chunk's text, read while the writer has it (the batch's buffer is reused after). */
const text = (chunk: Uint8Array) => Buffer.from(chunk).toString('utf8');

describe('batchedLines', () => {
  it('writes a batch maxDelayMs after its first line, in order, as one chunk', async () => {
    vi.useFakeTimers();
    try {
      const chunks: string[] = [];
      const log = batchedLines((c) => chunks.push(text(c)), { maxDelayMs: 50 });
      log('a');
      vi.advanceTimersByTime(30);
      log('b');
      log('c');
      vi.advanceTimersByTime(19);
      expect(chunks).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(chunks).toEqual(['a\nb\nc\n']);
      log('d');
      vi.advanceTimersByTime(50);
      expect(chunks).toEqual(['a\nb\nc\n', 'd\n']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('with maxDelayMs 0, writes the lines of one turn when the turn ends', async () => {
    const chunks: string[] = [];
    const log = batchedLines((c) => chunks.push(text(c)), { maxDelayMs: 0 });
    log('a');
    log('b');
    expect(chunks).toEqual([]);
    await nextTurn();
    expect(chunks).toEqual(['a\nb\n']);
  });

  it('writes at once when maxBytes are waiting, and keeps the order', async () => {
    const chunks: string[] = [];
    const log = batchedLines((c) => chunks.push(text(c)), { maxBytes: 6, maxDelayMs: 0 });
    for (const l of ['1', '2', '3', '4']) log(l);
    expect(chunks).toEqual(['1\n2\n3\n']);
    await nextTurn();
    expect(chunks.join('')).toBe('1\n2\n3\n4\n');
  });

  it('counts bytes, keeps characters of any width, and writes a line longer than a batch on its own, in order', async () => {
    const chunks: string[] = [];
    const log = batchedLines((c) => chunks.push(text(c)), { maxBytes: 16, maxDelayMs: 0 });
    log('é€😀'); // 2 + 3 + 4 bytes, 4 UTF-16 units
    expect(chunks).toEqual([]);
    log('ab'); // 10 + 3 = 13 bytes
    log('x'); // 15
    log('y'); // 17: at least maxBytes wait
    expect(chunks).toEqual(['é€😀\nab\nx\ny\n']);
    log('first');
    log('a line of more than sixteen bytes\u2028');
    log('after');
    expect(chunks.slice(1)).toEqual(['first\n', 'a line of more than sixteen bytes\u2028\n']);
    await nextTurn();
    expect(chunks.slice(3)).toEqual(['after\n']);
    // The buffer is reused: every batch read as written.
    for (let i = 0; i < 20; i++) log(`line ${i}`);
    await nextTurn();
    expect(chunks.slice(4).join('')).toBe(Array.from({ length: 20 }, (_, i) => `line ${i}\n`).join(''));
  });

  it('formats the line JSON.stringify({ time, level, msg, ...fields }) would', () => {
    const lines: string[] = [];
    const logger = createJsonLogger('debug', (l) => lines.push(l));
    const cases: [string, Record<string, unknown> | undefined][] = [
      ['request', { requestId: 'r', path: '/a"b\\c\u2028', status: 200, durationMs: 1.5, tenant: undefined }],
      ['empty', {}],
      ['none', undefined],
      ['nested "quotes"', { error: { message: 'x' }, list: [1, 'two'] }],
      [
        'values JSON writes its own way',
        {
          nan: Number.NaN,
          inf: -Infinity,
          negZero: -0,
          big: 1e21,
          tiny: 5e-7,
          yes: true,
          nothing: null,
          fn: () => 1,
          sym: Symbol('s'),
          date: new Date(0),
          long: 'x'.repeat(65),
          longest: 'y'.repeat(64),
          empty: '',
          control: 'a\tb\u0000\u007f',
          unicode: 'é✓\ud83d\ude00',
          lone: '\ud800',
          'key "quoted"\\': 1,
          '': 'empty key',
          [Symbol('k')]: 'symbol key',
        },
      ],
      ['inherited', Object.assign(Object.create({ inherited: 1 }) as Record<string, unknown>, { own: 2 })],
    ];
    for (const [msg, fields] of cases) logger.info(msg, fields);
    lines.forEach((line, i) => {
      const [msg, fields] = cases[i]!;
      const parsed = JSON.parse(line) as Record<string, unknown>;
      expect(Object.keys(parsed).slice(0, 3)).toEqual(['time', 'level', 'msg']);
      expect(line).toBe(JSON.stringify({ time: parsed.time, level: 'info', msg, ...fields }));
      expect(Math.abs(Date.parse(parsed.time as string) - Date.now())).toBeLessThan(60_000);
    });
  });

  it('carries JSON log lines unchanged', async () => {
    const chunks: string[] = [];
    const logger = createJsonLogger(
      'info',
      batchedLines((c) => chunks.push(text(c)), { maxDelayMs: 0 }),
    );
    logger.info('request', { status: 200, path: '/v1/artifacts/x\ny' });
    logger.debug('dropped');
    logger.warn('slow');
    await nextTurn();
    const lines = chunks
      .join('')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['info', 'request'],
      ['warn', 'slow'],
    ]);
    expect(lines[0]!.path).toBe('/v1/artifacts/x\ny');
  });

  it('holds infoLater lines until `later` runs its callback, then formats them in order', () => {
    const lines: string[] = [];
    const scheduled: (() => void)[] = [];
    const logger = createJsonLogger('info', (l) => lines.push(l), { later: (format) => scheduled.push(format) });
    logger.infoLater!('request', { n: 1 });
    logger.infoLater!('request', { n: 2, path: '/a "quoted" path' });
    expect(lines).toEqual([]);
    expect(scheduled).toHaveLength(1);
    scheduled[0]!();
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toMatchObject([
      { level: 'info', msg: 'request', n: 1 },
      { level: 'info', msg: 'request', n: 2, path: '/a "quoted" path' },
    ]);
    // Formatted as info() would have formatted them.
    const time = (JSON.parse(lines[1]!) as { time: string }).time;
    expect(lines[1]).toBe(JSON.stringify({ time, level: 'info', msg: 'request', n: 2, path: '/a "quoted" path' }));
    scheduled[0]!();
    expect(lines).toHaveLength(2);
  });

  it('writes held lines before any other line, and all of them once 64 wait', () => {
    const lines: string[] = [];
    const scheduled: (() => void)[] = [];
    const logger = createJsonLogger('info', (l) => lines.push(l), { later: (format) => scheduled.push(format) });
    logger.infoLater!('request', { n: 1 });
    logger.warn('slow', { n: 2 });
    logger.infoLater!('request', { n: 3 });
    logger.info('plain', { n: 4 });
    expect(lines.map((l) => (JSON.parse(l) as { n: number }).n)).toEqual([1, 2, 3, 4]);
    for (let n = 5; n < 5 + 63; n++) logger.infoLater!('request', { n });
    expect(lines).toHaveLength(4);
    logger.infoLater!('request', { n: 68 });
    expect(lines.map((l) => (JSON.parse(l) as { n: number }).n)).toEqual(Array.from({ length: 68 }, (_, i) => i + 1));
    // One callback per batch held: the first, the second and the third (64 lines) held.
    expect(scheduled).toHaveLength(3);
    for (const format of scheduled) format();
    expect(lines).toHaveLength(68);
  });

  it('formats infoLater lines at once without `later`, and drops them below its level', () => {
    const lines: string[] = [];
    createJsonLogger('info', (l) => lines.push(l)).infoLater!('request', { n: 1 });
    expect(lines).toHaveLength(1);
    const later = vi.fn();
    createJsonLogger('warn', (l) => lines.push(l), { later }).infoLater!('request', { n: 2 });
    expect(lines).toHaveLength(1);
    expect(later).not.toHaveBeenCalled();
  });

  // A process that exits (or crashes) in the same turn it logged must not lose those lines.
  const moduleUrl = (path: string) => JSON.stringify(pathToFileURL(fileURLToPath(new URL(path, import.meta.url))).href);
  const runChild = (
    ending: string,
    logging = "const log = batchedLines((c) => process.stdout.write(Buffer.from(c)));\nlog('first'); log('last');",
  ) => {
    const code = `const { batchedLines } = await import(${moduleUrl('../src/node/log-lines.ts')});
const { createServiceLogger } = await import(${moduleUrl('../src/node/logger.ts')});
${logging}
${ending}`;
    return new Promise<{ stdout: string; code: number | null }>((resolve) => {
      const child = execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], (_err, stdout) =>
        resolve({ stdout, code: child.exitCode }),
      );
    });
  };

  it('writes pending lines when the process exits in the same turn', async () => {
    expect(await runChild('process.exit(3);')).toEqual({ stdout: 'first\nlast\n', code: 3 });
  });

  it('importing artifact-store/node registers no process handlers; the first logged line adds the exit flush', async () => {
    const node = JSON.stringify(pathToFileURL(fileURLToPath(new URL('../src/node.ts', import.meta.url))).href);
    const lines = JSON.stringify(
      pathToFileURL(fileURLToPath(new URL('../src/node/log-lines.ts', import.meta.url))).href,
    );
    const events = ['exit', 'beforeExit', 'SIGINT', 'SIGTERM', 'uncaughtException', 'unhandledRejection'];
    const code = `const count = () => ${JSON.stringify(events)}.map((e) => process.listenerCount(e)).join(',');
const before = count();
await import(${node});
const { batchedLines } = await import(${lines});
const imported = count();
batchedLines(() => {})('a line');
console.log(JSON.stringify({ before, imported, logged: count() }));`;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], (err, stdout) =>
        err ? reject(err) : resolve(stdout),
      ),
    );
    const { before, imported, logged } = JSON.parse(out.trim().split('\n').pop()!) as Record<string, string>;
    expect(imported).toBe(before);
    expect(logged).not.toBe(before);
  });

  it('writes pending lines when the process dies of an uncaught exception', async () => {
    const r = await runChild(`throw new Error('boom');`);
    expect(r.stdout).toBe('first\nlast\n');
    expect(r.code).not.toBe(0);
  });

  // The service's logger holds the access log's lines until the turn ends: an exit before then keeps them.
  const serviceLogging = `const logger = createServiceLogger('info');
logger.infoLater('request', { n: 1 });
logger.infoLater('request', { n: 2 });
logger.warn('slow', { n: 3 });
logger.infoLater('request', { n: 4 });`;
  const loggedNs = (stdout: string) =>
    stdout
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as { n: number }).n);

  it.each([
    ['exits in the same turn', 'process.exit(3);', 3],
    ['dies of an uncaught exception', "throw new Error('boom');", 1],
    ['ends on its own', '', 0],
  ])('the service logger writes held lines, in order, when the process %s', async (_, ending, code) => {
    const r = await runChild(ending, serviceLogging);
    expect(loggedNs(r.stdout)).toEqual([1, 2, 3, 4]);
    expect(r.code).toBe(code);
  });
});
