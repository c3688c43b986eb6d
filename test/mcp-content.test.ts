import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, realpath, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  AudioContentSchema,
  EmbeddedResourceSchema,
  ImageContentSchema,
  ResourceLinkSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { fileTypeFromBuffer } from 'file-type';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ArtifactError, type ErrorCode } from '../src/core/errors.js';
import { artifactId } from '../src/core/ids.js';
import { ArtifactRefSchema, type ArtifactRef } from '../src/core/schemas.js';
import {
  artifactLink,
  toContent,
  type BinaryContent,
  type ContentInput,
  type ToContentOptions,
} from '../src/mcp/content.js';
import * as payloads from './helpers/payloads.js';

// ---------------------------------------------------------------------------------------------
// Fixtures: real bytes of each format, checked against file-type before any test runs.
// ---------------------------------------------------------------------------------------------

const MiB = 1024 * 1024;

const PNG = payloads.PNG_1X1;

/** A valid PNG with a text chunk: each `seed` (under 26) gives different bytes. */
const pngVariant = (seed: number, textBytes = 64): Buffer => payloads.png(PNG.length + 12 + textBytes, seed);

const GIF = payloads.GIF_1X1;
const JPEG = payloads.jpeg(86);
const webp = (): Buffer => payloads.WEBP_1X1;
const mp3 = (): Buffer => payloads.mp3(4);
const wav = (): Buffer => payloads.wav(800);
const zip = (name: string, content: string): Buffer => payloads.zip({ [name]: content });
const pdf = (): Promise<Buffer> => payloads.pdf(1);

/** Bytes no signature matches (checked in setup). */
const UNKNOWN = Buffer.from('0123456789 plain, unremarkable bytes with no signature\n'.repeat(4));

type Kind = BinaryContent['type'];
interface Fixture {
  bytes: Buffer;
  mime: string;
  kind: Kind;
}

const FORMATS = ['png', 'jpeg', 'gif', 'webp', 'mp3', 'wav', 'pdf', 'zip'] as const;
type Format = (typeof FORMATS)[number];
const fixtures = {} as Record<Format, Fixture>;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** The block is valid MCP content, by the SDK's own schema for its type. */
function assertValidMcp(block: BinaryContent): void {
  const schema =
    block.type === 'image' ? ImageContentSchema : block.type === 'audio' ? AudioContentSchema : EmbeddedResourceSchema;
  const parsed = schema.safeParse(block);
  expect(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues)).toBe(true);
}

/** The bytes a block carries (image/audio `data`, or the resource `blob`). */
function payloadOf(block: BinaryContent): Buffer {
  if (block.type === 'resource') {
    expect('blob' in block.resource, 'an EmbeddedResource with a blob, not text').toBe(true);
    return Buffer.from((block.resource as { blob: string }).blob, 'base64');
  }
  return Buffer.from(block.data, 'base64');
}

function mimeOf(block: BinaryContent): string | undefined {
  return block.type === 'resource' ? block.resource.mimeType : block.mimeType;
}

/** The ArtifactError a call fails with (fails the test when it resolves or throws anything else). */
async function failure(promise: Promise<unknown>): Promise<ArtifactError> {
  let result: unknown;
  try {
    result = await promise;
  } catch (err) {
    expect(err, String(err)).toBeInstanceOf(ArtifactError);
    return err as ArtifactError;
  }
  throw new Error(`expected an ArtifactError, got a result: ${JSON.stringify(result).slice(0, 200)}`);
}

async function codeOf(promise: Promise<unknown>): Promise<ErrorCode> {
  return (await failure(promise)).code;
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Options that collect warnings instead of printing them. */
function collecting(extra: ToContentOptions = {}): { options: ToContentOptions; warnings: string[] } {
  const warnings: string[] = [];
  return { options: { ...extra, onWarning: (m) => warnings.push(m) }, warnings };
}

// ---------------------------------------------------------------------------------------------
// Files: a temporary root holding the base folder and a sibling folder outside it.
// ---------------------------------------------------------------------------------------------

let root: string;
/** basePath as passed in. */
let base: string;
/** The base folder after realpath, as error messages print it. */
let realBase: string;
let outside: string;

beforeAll(async () => {
  Object.assign(fixtures, {
    png: { bytes: PNG, mime: 'image/png', kind: 'image' },
    jpeg: { bytes: JPEG, mime: 'image/jpeg', kind: 'image' },
    gif: { bytes: GIF, mime: 'image/gif', kind: 'image' },
    webp: { bytes: webp(), mime: 'image/webp', kind: 'image' },
    mp3: { bytes: mp3(), mime: 'audio/mpeg', kind: 'audio' },
    wav: { bytes: wav(), mime: 'audio/wav', kind: 'audio' },
    pdf: { bytes: await pdf(), mime: 'application/pdf', kind: 'resource' },
    zip: { bytes: zip('report.txt', 'Q3 numbers\n'), mime: 'application/zip', kind: 'resource' },
  } satisfies Record<Format, Fixture>);
  // A fixture that is not what it claims would make every detection test meaningless: fail here.
  for (const name of FORMATS) {
    const detected = await fileTypeFromBuffer(fixtures[name].bytes);
    if (detected?.mime !== fixtures[name].mime)
      throw new Error(`fixture ${name}: file-type says ${JSON.stringify(detected)}, expected ${fixtures[name].mime}`);
  }
  if ((await fileTypeFromBuffer(UNKNOWN)) !== undefined) throw new Error('fixture UNKNOWN matches a file signature');
  if ((await fileTypeFromBuffer(Buffer.from('region,units\nnorth,12\n'))) !== undefined)
    throw new Error('CSV fixture matches a file signature');

  root = await mkdtemp(join(tmpdir(), 'mcp-content-'));
  base = join(root, 'base');
  outside = join(root, 'outside');
  await mkdir(join(base, 'sub', 'deeper'), { recursive: true });
  await mkdir(join(base, 'empty-folder'));
  await mkdir(outside);
  realBase = await realpath(base);
  await writeFile(join(base, 'chart.png'), PNG);
  await writeFile(join(base, 'report.pdf'), fixtures.pdf.bytes);
  await writeFile(join(base, 'sub', 'deeper', 'photo.jpg'), JPEG);
  await writeFile(join(base, 'data.csv'), 'region,units\nnorth,12\nsouth,7\n');
  await writeFile(join(base, 'notes.md'), '# Notes\n\nPlain markdown, no signature.\n');
  await writeFile(join(base, 'mystery.unknownext'), UNKNOWN);
  await writeFile(join(base, 'png-named.txt'), PNG);
  await writeFile(join(base, 'empty.png'), Buffer.alloc(0));
  await writeFile(join(outside, 'secret.png'), PNG);
  await writeFile(join(outside, 'secret.txt'), 'outside the base folder');
  await symlink(join(outside, 'secret.png'), join(base, 'escape.png'));
  await symlink(outside, join(base, 'escape-dir'));
  await symlink(join(base, 'chart.png'), join(base, 'alias.png'));
  await symlink(join(base, 'sub', 'deeper'), join(base, 'deeper-link'));
  await symlink(join(base, 'loop-b'), join(base, 'loop-a'));
  await symlink(join(base, 'loop-a'), join(base, 'loop-b'));
  await symlink(base, join(root, 'base-link'));
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

afterEach(() => {
  vi.restoreAllMocks();
});

// ---------------------------------------------------------------------------------------------
// toContent: bytes
// ---------------------------------------------------------------------------------------------

describe('toContent: magic bytes pick the block', () => {
  it.each(FORMATS)('%s bytes → the right block and MIME type, byte-identical, valid MCP content', async (name) => {
    const { bytes, mime, kind } = fixtures[name];
    const block = await toContent(bytes);
    expect(block.type).toBe(kind);
    expect(mimeOf(block)).toBe(mime);
    expect(payloadOf(block).equals(bytes)).toBe(true);
    assertValidMcp(block);
  });

  it('a PNG Buffer → { type: "image", data, mimeType: "image/png" } and nothing else', async () => {
    const block = await toContent(PNG);
    expect(block).toEqual({ type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' });
    expect(ImageContentSchema.parse(block)).toEqual(block);
  });

  it('a JPEG as a plain Uint8Array (not a Buffer) is detected', async () => {
    const u8 = new Uint8Array(JPEG);
    expect(Buffer.isBuffer(u8)).toBe(false);
    const block = await toContent(u8);
    expect(block).toEqual({ type: 'image', data: JPEG.toString('base64'), mimeType: 'image/jpeg' });
  });

  it('an ArrayBuffer works too', async () => {
    const ab = new ArrayBuffer(GIF.length);
    new Uint8Array(ab).set(GIF);
    const block = await toContent(ab);
    expect(block).toEqual({ type: 'image', data: GIF.toString('base64'), mimeType: 'image/gif' });
  });

  it('a Uint8Array view into a larger buffer encodes only its own bytes', async () => {
    const backing = Buffer.concat([Buffer.from('junk before the image'), PNG, Buffer.from('junk after')]);
    const view = new Uint8Array(backing.buffer, backing.byteOffset + 21, PNG.length);
    const block = await toContent(view);
    expect(block.type).toBe('image');
    expect(payloadOf(block).equals(PNG)).toBe(true);
  });

  it('an MP3 with an ID3 tag is audio/mpeg audio, a WAV is audio/wav audio', async () => {
    const mp3Block = await toContent(fixtures.mp3.bytes);
    expect(mp3Block).toEqual({ type: 'audio', data: fixtures.mp3.bytes.toString('base64'), mimeType: 'audio/mpeg' });
    expect(AudioContentSchema.parse(mp3Block)).toEqual(mp3Block);
    const wavBlock = await toContent(fixtures.wav.bytes);
    expect(wavBlock).toEqual({ type: 'audio', data: fixtures.wav.bytes.toString('base64'), mimeType: 'audio/wav' });
  });

  it('a PDF → an EmbeddedResource blob (application/pdf) whose uri is the sha256 of the bytes', async () => {
    const bytes = fixtures.pdf.bytes;
    const block = await toContent(bytes);
    expect(block).toEqual({
      type: 'resource',
      resource: { uri: `urn:sha256:${sha256(bytes)}`, mimeType: 'application/pdf', blob: bytes.toString('base64') },
    });
    expect(EmbeddedResourceSchema.parse(block)).toEqual(block);
  });

  it('a ZIP → an EmbeddedResource blob (application/zip)', async () => {
    const block = await toContent(fixtures.zip.bytes);
    expect(block.type).toBe('resource');
    expect(mimeOf(block)).toBe('application/zip');
    expect(payloadOf(block).equals(fixtures.zip.bytes)).toBe(true);
  });

  it('unknown bytes → application/octet-stream, as a resource', async () => {
    const block = await toContent(UNKNOWN);
    expect(block.type).toBe('resource');
    expect(mimeOf(block)).toBe('application/octet-stream');
    expect(payloadOf(block).equals(UNKNOWN)).toBe(true);
    assertValidMcp(block);
  });

  it('options.uri names the EmbeddedResource', async () => {
    const block = await toContent(fixtures.pdf.bytes, { uri: 'artifact://art_0123456789abcdef01234567' });
    expect(block.type === 'resource' && block.resource.uri).toBe('artifact://art_0123456789abcdef01234567');
  });

  it('the same bytes always get the same urn:sha256 uri; different bytes a different one', async () => {
    const a = await toContent(UNKNOWN);
    const b = await toContent(Buffer.from(UNKNOWN));
    const c = await toContent(Buffer.concat([UNKNOWN, Buffer.from('x')]));
    const uri = (x: BinaryContent) => (x.type === 'resource' ? x.resource.uri : undefined);
    expect(uri(a)).toBe(uri(b));
    expect(uri(a)).not.toBe(uri(c));
  });
});

describe('toContent: declared MIME types', () => {
  it('options.mimeType wins over the magic bytes, and the block follows it', async () => {
    const asBlob = await toContent(PNG, { mimeType: 'application/octet-stream' });
    expect(asBlob.type).toBe('resource');
    expect(mimeOf(asBlob)).toBe('application/octet-stream');
    const asWebp = await toContent(PNG, { mimeType: 'image/webp' });
    expect(asWebp).toEqual({ type: 'image', data: PNG.toString('base64'), mimeType: 'image/webp' });
  });

  it('a known declared type gives no warning', async () => {
    const { options, warnings } = collecting({ mimeType: 'image/png' });
    await toContent(PNG, options);
    expect(warnings).toEqual([]);
  });

  it('an unrecognised declared type (image/xyz-invalid) warns through onWarning but the content still goes out as declared', async () => {
    const { options, warnings } = collecting({ mimeType: 'image/xyz-invalid' });
    const block = await toContent(PNG, options);
    expect(block).toEqual({ type: 'image', data: PNG.toString('base64'), mimeType: 'image/xyz-invalid' });
    assertValidMcp(block);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('image/xyz-invalid');
  });

  it('without onWarning, warnings go to console.warn', async () => {
    const spy = vi.spyOn(console, 'warn').mockImplementation(() => {});
    await toContent(PNG, { mimeType: 'image/xyz-invalid' });
    expect(spy).toHaveBeenCalledTimes(1);
    expect(String(spy.mock.calls[0]![0])).toContain('image/xyz-invalid');
  });
});

describe('toContent: typed payloads { type, data, mimeType }', () => {
  it('an explicit image payload passes through unchanged', async () => {
    const data = PNG.toString('base64');
    const { options, warnings } = collecting();
    const block = await toContent({ type: 'image', data, mimeType: 'image/png' }, options);
    expect(block).toEqual({ type: 'image', data, mimeType: 'image/png' });
    expect(warnings).toEqual([]);
    assertValidMcp(block);
  });

  it('the declared type is trusted even when the bytes say otherwise', async () => {
    const block = await toContent({ type: 'image', data: JPEG, mimeType: 'image/png' });
    expect(block).toEqual({ type: 'image', data: JPEG.toString('base64'), mimeType: 'image/png' });
  });

  it('without mimeType, the bytes decide the MIME type but the declared block type stays', async () => {
    const audio = await toContent({ type: 'audio', data: new Uint8Array(fixtures.wav.bytes) });
    expect(audio).toEqual({ type: 'audio', data: fixtures.wav.bytes.toString('base64'), mimeType: 'audio/wav' });
    const resource = await toContent({ type: 'resource', data: PNG.toString('base64') });
    expect(resource).toEqual({
      type: 'resource',
      resource: { uri: `urn:sha256:${sha256(PNG)}`, mimeType: 'image/png', blob: PNG.toString('base64') },
    });
    assertValidMcp(resource);
  });

  it("options.mimeType wins over the payload's own mimeType", async () => {
    const block = await toContent({ type: 'image', data: PNG, mimeType: 'image/gif' }, { mimeType: 'image/png' });
    expect(mimeOf(block)).toBe('image/png');
  });

  it('an unrecognised declared mimeType warns and is still returned', async () => {
    const { options, warnings } = collecting();
    const block = await toContent(
      { type: 'image', data: PNG.toString('base64'), mimeType: 'image/xyz-invalid' },
      options,
    );
    expect(block).toEqual({ type: 'image', data: PNG.toString('base64'), mimeType: 'image/xyz-invalid' });
    expect(warnings.join('\n')).toContain('image/xyz-invalid');
  });

  it('invalid base64 in data is a bad_request naming the payload', async () => {
    const err = await failure(toContent({ type: 'image', data: 'this is *not* base64!', mimeType: 'image/png' }));
    expect(err.code).toBe('bad_request');
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/Invalid base64/);
    expect(err.message).toContain('image data');
  });
});

// ---------------------------------------------------------------------------------------------
// toContent: base64 and data: URLs
// ---------------------------------------------------------------------------------------------

describe('toContent: base64 strings and data: URLs', () => {
  it('base64 round-trips byte-identical for every format', async () => {
    for (const name of FORMATS) {
      const { bytes, mime } = fixtures[name];
      const block = await toContent(bytes.toString('base64'));
      expect(mimeOf(block), name).toBe(mime);
      expect(payloadOf(block).equals(bytes), name).toBe(true);
      // The block's own base64 is canonical: re-encoding the decoded bytes gives the same text.
      const text = block.type === 'resource' ? (block.resource as { blob: string }).blob : block.data;
      expect(text, name).toBe(bytes.toString('base64'));
    }
  });

  it('base64url without padding, and base64 wrapped at 60 / 76 characters, decode to the same bytes', async () => {
    const bytes = fixtures.pdf.bytes;
    const variants = [
      bytes.toString('base64url'),
      bytes.toString('base64').replace(/.{60}/g, '$&\n'),
      bytes.toString('base64').replace(/.{76}/g, '$&\r\n'),
      `  ${bytes.toString('base64')}\n`,
    ];
    for (const text of variants) {
      const block = await toContent(text);
      expect(mimeOf(block)).toBe('application/pdf');
      expect(payloadOf(block).equals(bytes)).toBe(true);
    }
  });

  it('a data: URL uses its declared MIME type', async () => {
    const png = await toContent(`data:image/png;base64,${PNG.toString('base64')}`);
    expect(png).toEqual({ type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' });
    // Declared wins over the magic bytes: the URL says WebP, so WebP it is.
    const declared = await toContent(`data:image/webp;base64,${PNG.toString('base64')}`);
    expect(declared).toEqual({ type: 'image', data: PNG.toString('base64'), mimeType: 'image/webp' });
    const audio = await toContent(`data:audio/wav;base64,${fixtures.wav.bytes.toString('base64')}`);
    expect(audio.type).toBe('audio');
    const doc = await toContent(`data:application/pdf;base64,${fixtures.pdf.bytes.toString('base64')}`);
    expect(doc.type).toBe('resource');
    expect(mimeOf(doc)).toBe('application/pdf');
    expect(payloadOf(doc).equals(fixtures.pdf.bytes)).toBe(true);
  });

  it('a data: URL with parameters keeps the bare type; one without a type falls back to the bytes', async () => {
    const text = Buffer.from('region,units\nnorth,12\n');
    const csv = await toContent(`data:text/csv;charset=utf-8;base64,${text.toString('base64')}`);
    expect(csv.type).toBe('resource');
    expect(mimeOf(csv)).toBe('text/csv');
    const untyped = await toContent(`data:;base64,${GIF.toString('base64')}`);
    expect(untyped).toEqual({ type: 'image', data: GIF.toString('base64'), mimeType: 'image/gif' });
  });

  it("options.mimeType wins over the data: URL's type", async () => {
    const block = await toContent(`data:image/png;base64,${PNG.toString('base64')}`, {
      mimeType: 'application/octet-stream',
    });
    expect(block.type).toBe('resource');
    expect(mimeOf(block)).toBe('application/octet-stream');
  });

  it('an unrecognised type in a data: URL warns but still goes out', async () => {
    const { options, warnings } = collecting();
    const block = await toContent(`data:image/xyz-invalid;base64,${PNG.toString('base64')}`, options);
    expect(mimeOf(block)).toBe('image/xyz-invalid');
    expect(warnings).toHaveLength(1);
  });

  it('invalid base64 is a bad_request that says what is wrong and what to do', async () => {
    for (const text of ['this is *not* base64!', 'iVBORw0KGgo!AAAAN', 'abcde', 'QUJD====', 'QU=JD']) {
      const err = await failure(toContent(text));
      expect(err.code, text).toBe('bad_request');
      expect(err.message, text).toMatch(/Invalid base64/);
      expect(err.message, text).toMatch(/base64-encoded|pass the bytes/);
    }
  });

  it('a truncated payload is refused, not half-decoded', async () => {
    const b64 = PNG.toString('base64');
    const err = await failure(toContent(b64.slice(0, b64.length - 7)));
    expect(err.code).toBe('bad_request');
    expect(err.message).toMatch(/truncated|length/);
  });

  it('a data: URL that is not base64 is refused with the expected form', async () => {
    for (const text of ['data:text/plain,hello', 'data:image/png;base64', 'data:image/png;charset=x,AAAA']) {
      const err = await failure(toContent(text));
      expect(err.code, text).toBe('bad_request');
      expect(err.message, text).toContain('data:<mime>;base64,<payload>');
    }
  });

  it('a data: URL with a corrupt body is a bad_request', async () => {
    expect(await codeOf(toContent('data:image/png;base64,@@@@not-base64@@@@'))).toBe('bad_request');
  });
});

// ---------------------------------------------------------------------------------------------
// toContent: empty and unusable input
// ---------------------------------------------------------------------------------------------

describe('toContent: empty and unusable input', () => {
  it('empty bytes, empty base64, an empty data: URL and an empty typed payload are bad_request', async () => {
    const inputs: ContentInput[] = [
      Buffer.alloc(0),
      new Uint8Array(0),
      new ArrayBuffer(0),
      '',
      'data:image/png;base64,',
      { type: 'image', data: '', mimeType: 'image/png' },
      { type: 'resource', data: new Uint8Array(0) },
    ];
    for (const input of inputs) {
      const err = await failure(toContent(input));
      expect(err.code).toBe('bad_request');
      expect(err.message).toMatch(/empty/);
    }
  });

  it('an empty file is bad_request naming the file', async () => {
    const err = await failure(toContent({ path: 'empty.png' }, { basePath: base }));
    expect(err.code).toBe('bad_request');
    expect(err.message).toContain('empty.png');
    expect(err.message).toMatch(/empty/);
  });

  it('anything else is a bad_request listing what is accepted', async () => {
    for (const input of [
      42,
      null,
      undefined,
      {},
      { path: 7 },
      { type: 'video', data: 'AAAA' },
      { data: 'AAAA' },
      [PNG],
    ]) {
      const err = await failure(toContent(input as never));
      expect(err.code).toBe('bad_request');
      expect(err.message).toContain('{ path }');
    }
  });
});

// ---------------------------------------------------------------------------------------------
// toContent: files under a base path
// ---------------------------------------------------------------------------------------------

describe('toContent: files', () => {
  it('a PNG file → an image block of its exact bytes', async () => {
    const block = await toContent({ path: 'chart.png' }, { basePath: base });
    expect(block).toEqual({ type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' });
    assertValidMcp(block);
  });

  it('a PDF file → an EmbeddedResource whose uri is the file:// URL of the real file', async () => {
    const block = await toContent({ path: 'report.pdf' }, { basePath: base });
    expect(block).toEqual({
      type: 'resource',
      resource: {
        uri: pathToFileURL(join(realBase, 'report.pdf')).href,
        mimeType: 'application/pdf',
        blob: fixtures.pdf.bytes.toString('base64'),
      },
    });
    assertValidMcp(block);
  });

  it('options.uri wins over the file:// URL', async () => {
    const block = await toContent(
      { path: 'report.pdf' },
      { basePath: base, uri: 'artifact://report_0123456789abcdef01234567' },
    );
    expect(block.type === 'resource' && block.resource.uri).toBe('artifact://report_0123456789abcdef01234567');
  });

  it('nested, ./-prefixed and ..-inside-the-base paths all resolve', async () => {
    for (const path of [
      'sub/deeper/photo.jpg',
      './sub/deeper/photo.jpg',
      'sub/../sub/deeper/./photo.jpg',
      'sub/deeper/../../chart.png',
    ]) {
      const block = await toContent({ path }, { basePath: base });
      expect(block.type, path).toBe('image');
    }
  });

  it('an absolute path inside the base works', async () => {
    const block = await toContent({ path: join(base, 'sub', 'deeper', 'photo.jpg') }, { basePath: base });
    expect(block).toEqual({ type: 'image', data: JPEG.toString('base64'), mimeType: 'image/jpeg' });
  });

  it('the base path defaults to the working directory', async () => {
    vi.spyOn(process, 'cwd').mockReturnValue(base);
    const block = await toContent({ path: 'chart.png' });
    expect(block.type).toBe('image');
    expect(await codeOf(toContent({ path: join(outside, 'secret.png') }))).toBe('forbidden');
  });

  it('a relative basePath resolves from the working directory', async () => {
    vi.spyOn(process, 'cwd').mockReturnValue(root);
    const block = await toContent({ path: 'chart.png' }, { basePath: 'base' });
    expect(block.type).toBe('image');
  });

  it('magic bytes beat the extension: a PNG named .txt is image/png', async () => {
    const block = await toContent({ path: 'png-named.txt' }, { basePath: base });
    expect(block).toEqual({ type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' });
  });

  it('without a signature the extension decides: .csv → text/csv, .md → text/markdown, as embedded resources', async () => {
    const csv = await toContent({ path: 'data.csv' }, { basePath: base });
    expect(csv).toEqual({
      type: 'resource',
      resource: {
        uri: pathToFileURL(join(realBase, 'data.csv')).href,
        mimeType: 'text/csv',
        blob: Buffer.from('region,units\nnorth,12\nsouth,7\n').toString('base64'),
      },
    });
    assertValidMcp(csv);
    const md = await toContent({ path: 'notes.md' }, { basePath: base });
    expect(md.type).toBe('resource');
    expect(mimeOf(md)).toBe('text/markdown');
    expect(payloadOf(md).toString()).toBe('# Notes\n\nPlain markdown, no signature.\n');
  });

  it('no signature and an unknown extension → application/octet-stream', async () => {
    const block = await toContent({ path: 'mystery.unknownext' }, { basePath: base });
    expect(block.type).toBe('resource');
    expect(mimeOf(block)).toBe('application/octet-stream');
    expect(payloadOf(block).equals(UNKNOWN)).toBe(true);
  });

  it("options.mimeType wins over the file's bytes and extension", async () => {
    const block = await toContent({ path: 'chart.png' }, { basePath: base, mimeType: 'application/octet-stream' });
    expect(block.type).toBe('resource');
    expect(mimeOf(block)).toBe('application/octet-stream');
  });

  it('a missing file is not_found: "File not found: ./chart.png — check the path relative to {base}"', async () => {
    const err = await failure(toContent({ path: './chart.png' }, { basePath: join(base, 'empty-folder') }));
    expect(err.code).toBe('not_found');
    expect(err.status).toBe(404);
    expect(err.message).toContain('File not found: ./chart.png');
    expect(err.message).toContain(`check the path relative to ${join(realBase, 'empty-folder')}`);
  });

  it('a path through a missing folder, or through a file, is not_found', async () => {
    expect(await codeOf(toContent({ path: 'no-such-folder/chart.png' }, { basePath: base }))).toBe('not_found');
    expect(await codeOf(toContent({ path: 'chart.png/inside' }, { basePath: base }))).toBe('not_found');
  });

  it('a directory is bad_request asking for a file', async () => {
    for (const path of ['sub', 'sub/deeper/', 'deeper-link']) {
      const err = await failure(toContent({ path }, { basePath: base }));
      expect(err.code, path).toBe('bad_request');
      expect(err.message, path).toMatch(/not a regular file/);
    }
  });

  it('a base path that does not exist is bad_request naming it', async () => {
    const missing = join(root, 'no-such-base');
    const err = await failure(toContent({ path: 'chart.png' }, { basePath: missing }));
    expect(err.code).toBe('bad_request');
    expect(err.message).toContain(`Base path not found: ${missing}`);
  });

  it('a symbolic link loop is bad_request', async () => {
    const err = await failure(toContent({ path: 'loop-a' }, { basePath: base }));
    expect(err.code).toBe('bad_request');
    expect(err.message).toMatch(/symbolic links/);
  });
});

describe('toContent: paths cannot leave the base folder', () => {
  it('../ traversal is forbidden, though the target exists', async () => {
    for (const path of [
      '../outside/secret.png',
      'sub/../../outside/secret.png',
      'sub/deeper/../../../outside/secret.txt',
      '../../../../../../etc/passwd',
    ]) {
      const err = await failure(toContent({ path }, { basePath: base }));
      expect(err.code, path).toBe('forbidden');
      expect(err.status, path).toBe(403);
      expect(err.message, path).toContain(realBase);
    }
  });

  it('traversal to a file that does not exist is forbidden too (no existence probe outside the base)', async () => {
    expect(await codeOf(toContent({ path: '../outside/nothing-here.png' }, { basePath: base }))).toBe('forbidden');
  });

  it('an absolute path outside the base is forbidden', async () => {
    for (const path of [join(outside, 'secret.png'), '/etc/passwd', root]) {
      expect(await codeOf(toContent({ path }, { basePath: base })), path).toBe('forbidden');
    }
  });

  it('the base folder itself is not a file to read', async () => {
    for (const path of ['.', '', base]) {
      const err = await failure(toContent({ path }, { basePath: base }));
      expect(['forbidden', 'bad_request'], JSON.stringify(path)).toContain(err.code);
    }
  });

  it('a path naming the base folder itself is a bad_request asking for a file path', async () => {
    for (const path of ['.', './', 'sub/..', 'sub/deeper/../..', base, `${base}/`, realBase]) {
      const err = await failure(toContent({ path }, { basePath: base }));
      expect(err.code, path).toBe('bad_request');
      expect(err.message, path).toContain(`Path ${path} is the base folder itself — pass a file path`);
    }
  });

  it("the base folder reached through a symlink (the base path's own link, or one inside it) is the base folder itself", async () => {
    const linked = join(root, 'base-link');
    for (const path of [linked, '.']) {
      const err = await failure(toContent({ path }, { basePath: linked }));
      expect(err.code, path).toBe('bad_request');
      expect(err.message, path).toMatch(/is the base folder itself — pass a file path/);
    }
    const self = join(base, 'self-link');
    await symlink(base, self);
    try {
      const err = await failure(toContent({ path: 'self-link' }, { basePath: base }));
      expect(err.code).toBe('bad_request');
      expect(err.message).toMatch(/is the base folder itself — pass a file path/);
      // Files through it are still files under the base.
      expect((await toContent({ path: 'self-link/chart.png' }, { basePath: base })).type).toBe('image');
    } finally {
      await rm(self, { force: true });
    }
  });

  it('an empty path is a bad_request asking for a file path', async () => {
    const err = await failure(toContent({ path: '' }, { basePath: base }));
    expect(err.code).toBe('bad_request');
    expect(err.message).toContain('The path is empty — pass a file path');
  });

  it('only ".." and "../…" climb out: names that merely start with ".." are ordinary names', async () => {
    await mkdir(join(base, '..data', '...'), { recursive: true });
    await writeFile(join(base, '..data', '...', 'photo.jpg'), JPEG);
    await writeFile(join(base, '...png'), PNG);
    for (const path of [
      '..data/.../photo.jpg',
      './..data/.../photo.jpg',
      join(base, '..data', '...', 'photo.jpg'),
      '...png',
      'sub/../...png',
    ]) {
      expect((await toContent({ path }, { basePath: base })).type, path).toBe('image');
    }
    for (const path of ['..', '../', '..data/../..', '..data/../../outside/secret.png']) {
      expect(await codeOf(toContent({ path }, { basePath: base })), path).toBe('forbidden');
    }
  });

  it('a sibling folder whose name starts with the base name is outside', async () => {
    await mkdir(`${base}-evil`, { recursive: true });
    await writeFile(join(`${base}-evil`, 'x.png'), PNG);
    expect(await codeOf(toContent({ path: join(`${base}-evil`, 'x.png') }, { basePath: base }))).toBe('forbidden');
    expect(await codeOf(toContent({ path: '../base-evil/x.png' }, { basePath: base }))).toBe('forbidden');
  });

  it('a symlink inside the base pointing outside is forbidden, and says why', async () => {
    const err = await failure(toContent({ path: 'escape.png' }, { basePath: base }));
    expect(err.code).toBe('forbidden');
    expect(err.message).toMatch(/symbolic link/);
    expect(err.message).toContain(realBase);
  });

  it('a file reached through a symlinked folder that points outside is forbidden', async () => {
    expect(await codeOf(toContent({ path: 'escape-dir/secret.png' }, { basePath: base }))).toBe('forbidden');
    expect(await codeOf(toContent({ path: join(base, 'escape-dir', 'secret.txt') }, { basePath: base }))).toBe(
      'forbidden',
    );
  });

  it("a symlink that stays inside the base is followed; the uri and extension are the real file's", async () => {
    const image = await toContent({ path: 'alias.png' }, { basePath: base });
    expect(image).toEqual({ type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' });
    const viaFolder = await toContent(
      { path: 'deeper-link/photo.jpg' },
      { basePath: base, mimeType: 'application/octet-stream' },
    );
    expect(viaFolder.type === 'resource' && viaFolder.resource.uri).toBe(
      pathToFileURL(join(realBase, 'sub', 'deeper', 'photo.jpg')).href,
    );
  });

  it('a base path that is itself a symlink is resolved first; relative paths under it work', async () => {
    const block = await toContent({ path: 'chart.png' }, { basePath: join(root, 'base-link') });
    expect(block.type).toBe('image');
    expect(await codeOf(toContent({ path: '../outside/secret.png' }, { basePath: join(root, 'base-link') }))).toBe(
      'forbidden',
    );
    expect(await codeOf(toContent({ path: 'escape.png' }, { basePath: join(root, 'base-link') }))).toBe('forbidden');
  });
});

// Former defects of src/mcp/content.ts, kept as regression tests.
describe('toContent: regressions', () => {
  it('a file whose name starts with ".." (..chart.png) inside the base is readable', async () => {
    // within() treats any relative path starting with ".." as a parent reference; only ".." and
    // "../…" are.
    await writeFile(join(base, '..chart.png'), PNG);
    const block = await toContent({ path: '..chart.png' }, { basePath: base });
    expect(block.type).toBe('image');
  });

  it('an absolute path spelled through a symlinked basePath is inside the base', async () => {
    // The lexical check compares the un-resolved target with the realpath of the base (on macOS,
    // os.tmpdir() is such a symlink: /var/folders/… → /private/var/folders/…).
    const linked = join(root, 'base-link');
    const block = await toContent({ path: join(linked, 'chart.png') }, { basePath: linked });
    expect(block.type).toBe('image');
  });

  it('MIME types are case-insensitive: data:IMAGE/PNG is an image block', async () => {
    const block = await toContent(`data:IMAGE/PNG;base64,${PNG.toString('base64')}`);
    expect(block.type).toBe('image');
  });

  it('a path with a NUL byte is a bad_request, not a raw TypeError', async () => {
    expect(await codeOf(toContent({ path: 'chart.png\0.txt' }, { basePath: base }))).toBe('bad_request');
  });
});

describe('toContent: absolute paths through a symlinked base path', () => {
  const linked = () => join(root, 'base-link');

  it("files, nested files and in-base symlinks are read; the uri is the real file's", async () => {
    const block = await toContent({ path: join(linked(), 'report.pdf') }, { basePath: linked() });
    expect(block.type === 'resource' && block.resource.uri).toBe(pathToFileURL(join(realBase, 'report.pdf')).href);
    expect((await toContent({ path: join(linked(), 'sub', 'deeper', 'photo.jpg') }, { basePath: linked() })).type).toBe(
      'image',
    );
    expect((await toContent({ path: join(linked(), 'alias.png') }, { basePath: linked() })).type).toBe('image');
    // The resolved spelling works as well.
    expect((await toContent({ path: join(realBase, 'chart.png') }, { basePath: linked() })).type).toBe('image');
  });

  it('escapes spelled through the link are still refused', async () => {
    for (const path of [
      join(linked(), '..', 'outside', 'secret.png'),
      join(linked(), 'escape.png'),
      join(linked(), 'escape-dir', 'secret.txt'),
      join(root, 'outside', 'secret.png'),
    ]) {
      expect(await codeOf(toContent({ path }, { basePath: linked() })), path).toBe('forbidden');
    }
  });

  it('a missing file spelled through the link is not_found, relative to the resolved base', async () => {
    const err = await failure(toContent({ path: join(linked(), 'nothing-here.png') }, { basePath: linked() }));
    expect(err.code).toBe('not_found');
    expect(err.message).toContain(`check the path relative to ${realBase}`);
  });

  it('a relative path is never read as spelled through the link', async () => {
    // "base-link/chart.png" relative to the base is base/base-link/chart.png, which does not exist.
    expect(await codeOf(toContent({ path: 'base-link/chart.png' }, { basePath: linked() }))).toBe('not_found');
  });
});

describe('toContent: NUL bytes in paths', () => {
  it('anywhere in the path: a bad_request that names the NUL byte (not a raw TypeError)', async () => {
    for (const path of [
      'chart.png\0',
      '\0',
      'sub/\0/photo.jpg',
      `${base}/chart.png\0.txt`,
      '../outside\0/secret.png',
    ]) {
      const err = await failure(toContent({ path }, { basePath: base }));
      expect(err.code, JSON.stringify(path)).toBe('bad_request');
      expect(err.message, JSON.stringify(path)).toContain('NUL byte');
      // The message shows the byte escaped, never raw.
      expect(err.message).not.toContain('\0');
    }
  });

  it('in the base path: a bad_request that says so', async () => {
    const err = await failure(toContent({ path: 'chart.png' }, { basePath: `${base}\0` }));
    expect(err.code).toBe('bad_request');
    expect(err.message).toMatch(/Base path .* NUL byte/);
  });
});

describe('toContent: MIME types in any case', () => {
  it('upper- and mixed-case types pick the block; the type goes out as given, without a warning', async () => {
    const cases: [ContentInput, ToContentOptions, Kind, string][] = [
      [PNG, { mimeType: 'IMAGE/PNG' }, 'image', 'IMAGE/PNG'],
      [PNG, { mimeType: 'Image/Png' }, 'image', 'Image/Png'],
      [`data:Audio/WAV;base64,${fixtures.wav.bytes.toString('base64')}`, {}, 'audio', 'Audio/WAV'],
      [{ type: 'image', data: PNG, mimeType: 'IMAGE/PNG' }, {}, 'image', 'IMAGE/PNG'],
      [{ type: 'audio', data: fixtures.mp3.bytes, mimeType: 'AUDIO/MPEG' }, {}, 'audio', 'AUDIO/MPEG'],
      [fixtures.pdf.bytes, { mimeType: 'APPLICATION/PDF' }, 'resource', 'APPLICATION/PDF'],
    ];
    for (const [input, extra, kind, mime] of cases) {
      const { options, warnings } = collecting(extra);
      const block = await toContent(input, options);
      expect(block.type, mime).toBe(kind);
      expect(mimeOf(block), mime).toBe(mime);
      expect(warnings, mime).toEqual([]);
      assertValidMcp(block);
    }
  });

  it('a type with parameters or surrounding spaces still picks the block', async () => {
    expect((await toContent(PNG, { mimeType: ' image/png ' })).type).toBe('image');
    expect((await toContent(fixtures.wav.bytes, { mimeType: 'AUDIO/WAV; codecs=1' })).type).toBe('audio');
  });
});

describe('toContent: a typed payload whose MIME type does not match its type', () => {
  it('type "image" with a PDF → an embedded resource (application/pdf) and one warning saying why', async () => {
    const { options, warnings } = collecting();
    const bytes = fixtures.pdf.bytes;
    const block = await toContent({ type: 'image', data: bytes.toString('base64') }, options);
    expect(block).toEqual({
      type: 'resource',
      resource: { uri: `urn:sha256:${sha256(bytes)}`, mimeType: 'application/pdf', blob: bytes.toString('base64') },
    });
    assertValidMcp(block);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('"image"');
    expect(warnings[0]).toContain('application/pdf');
    expect(warnings[0]).toContain('embedded resource');
  });

  it('a declared non-image type on type "image" → an embedded resource of that type; the warning asks for the right mimeType', async () => {
    const { options, warnings } = collecting({ uri: 'artifact://x_0123456789abcdef01234567' });
    const block = await toContent({ type: 'image', data: PNG, mimeType: 'application/pdf' }, options);
    expect(block).toEqual({
      type: 'resource',
      resource: {
        uri: 'artifact://x_0123456789abcdef01234567',
        mimeType: 'application/pdf',
        blob: PNG.toString('base64'),
      },
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('Pass the right mimeType');
  });

  it('type "audio" with image bytes, or type "image" with audio bytes → an embedded resource, not the other media block', async () => {
    for (const [type, bytes, mime] of [
      ['audio', PNG, 'image/png'],
      ['image', fixtures.wav.bytes, 'audio/wav'],
    ] as const) {
      const { options, warnings } = collecting();
      const block = await toContent({ type, data: bytes }, options);
      expect(block.type, type).toBe('resource');
      expect(mimeOf(block), type).toBe(mime);
      expect(payloadOf(block).equals(bytes), type).toBe(true);
      expect(warnings, type).toHaveLength(1);
      expect(warnings[0], type).toContain(`"${type}"`);
    }
  });

  it('type "image" with bytes nothing recognises → application/octet-stream as a resource; the warning suggests passing mimeType', async () => {
    const { options, warnings } = collecting();
    const block = await toContent({ type: 'image', data: UNKNOWN }, options);
    expect(block.type).toBe('resource');
    expect(mimeOf(block)).toBe('application/octet-stream');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('Pass mimeType');
  });

  it('options.mimeType decides the match too', async () => {
    const { options, warnings } = collecting({ mimeType: 'text/csv' });
    const block = await toContent({ type: 'image', data: PNG, mimeType: 'image/png' }, options);
    expect(block.type).toBe('resource');
    expect(mimeOf(block)).toBe('text/csv');
    expect(warnings).toHaveLength(1);
    const ok = collecting({ mimeType: 'image/gif' });
    expect((await toContent({ type: 'image', data: PNG, mimeType: 'application/pdf' }, ok.options)).type).toBe('image');
    expect(ok.warnings).toEqual([]);
  });

  it('type "resource" stays a resource whatever the MIME type, without a warning', async () => {
    const { options, warnings } = collecting();
    expect((await toContent({ type: 'resource', data: fixtures.mp3.bytes }, options)).type).toBe('resource');
    expect(warnings).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// toContent: size limits
// ---------------------------------------------------------------------------------------------

describe('toContent: size limits', () => {
  it('bytes over maxBytes are payload_too_large, with the limit, pointing at artifactLink', async () => {
    const bytes = pngVariant(1, 200);
    expect(bytes.length).toBeGreaterThan(100);
    const err = await failure(toContent(bytes, { maxBytes: 100 }));
    expect(err.code).toBe('payload_too_large');
    expect(err.status).toBe(413);
    expect(err.details).toEqual({ limitBytes: 100 });
    expect(err.message).toContain('artifactLink');
    expect(err.message).toContain('maxBytes');
    expect(err.message).toContain('100 B');
  });

  it('exactly maxBytes is accepted; one more byte is not', async () => {
    const bytes = Buffer.concat([PNG, Buffer.alloc(30, 0x20)]);
    const block = await toContent(bytes, { maxBytes: bytes.length });
    expect(payloadOf(block).equals(bytes)).toBe(true);
    expect(await codeOf(toContent(Buffer.concat([bytes, Buffer.from([0])]), { maxBytes: bytes.length }))).toBe(
      'payload_too_large',
    );
  });

  it('the limit applies to the decoded size of base64, data: URLs and typed payloads', async () => {
    const bytes = pngVariant(2, 200);
    for (const input of [
      bytes.toString('base64'),
      `data:image/png;base64,${bytes.toString('base64')}`,
      { type: 'image' as const, data: bytes.toString('base64'), mimeType: 'image/png' },
    ]) {
      expect(await codeOf(toContent(input, { maxBytes: 100 }))).toBe('payload_too_large');
    }
    // The base64 text is longer than the limit but the bytes are not: accepted.
    expect(PNG.toString('base64').length).toBeGreaterThan(PNG.length);
    expect((await toContent(PNG.toString('base64'), { maxBytes: PNG.length })).type).toBe('image');
  });

  it('base64 over the limit is refused from its length, before the bytes are decoded', async () => {
    const b64 = pngVariant(6, 3000).toString('base64');
    const inputs: ContentInput[] = [
      b64,
      b64.replace(/.{76}/g, '$&\r\n'),
      `data:image/png;base64,${b64}`,
      { type: 'image', data: b64 },
    ];
    const from = vi.spyOn(Buffer, 'from');
    const allocUnsafe = vi.spyOn(Buffer, 'allocUnsafe');
    for (const input of inputs) {
      const err = await failure(toContent(input, { maxBytes: 1000 }));
      expect(err.code).toBe('payload_too_large');
      expect(err.details).toEqual({ limitBytes: 1000 });
      expect(err.message).toContain('artifactLink');
    }
    expect(from.mock.calls.filter((c) => (c as unknown[])[1] === 'base64')).toEqual([]);
    expect(allocUnsafe).not.toHaveBeenCalled();
  });

  it('the size from the length is exact: padding and line breaks are not counted', async () => {
    for (const extra of [0, 1, 2]) {
      const bytes = Buffer.concat([PNG, Buffer.alloc(extra, 0x20)]);
      const wrapped = bytes.toString('base64').replace(/.{60}/g, '$&\n');
      expect((await toContent(wrapped, { maxBytes: bytes.length })).type, `+${extra}`).toBe('image');
      expect(await codeOf(toContent(wrapped, { maxBytes: bytes.length - 1 })), `+${extra}`).toBe('payload_too_large');
      const unpadded = bytes.toString('base64url');
      expect((await toContent(unpadded, { maxBytes: bytes.length })).type, `+${extra}`).toBe('image');
      expect(await codeOf(toContent(unpadded, { maxBytes: bytes.length - 1 })), `+${extra}`).toBe('payload_too_large');
    }
  });

  it('a 60 MB base64 string under the default limit is refused without allocating its bytes', async () => {
    const text = 'A'.repeat(80 * MiB);
    const allocUnsafe = vi.spyOn(Buffer, 'allocUnsafe');
    const from = vi.spyOn(Buffer, 'from');
    const err = await failure(toContent(text));
    expect(err.code).toBe('payload_too_large');
    expect(err.message).toContain('60 MiB');
    expect(err.details).toEqual({ limitBytes: 50 * MiB });
    expect(allocUnsafe).not.toHaveBeenCalled();
    expect(from.mock.calls.filter((c) => (c as unknown[])[1] === 'base64')).toEqual([]);
  });

  it('base64 over the limit that is also malformed is still refused for its size (the cheaper check runs first)', async () => {
    expect(await codeOf(toContent(`${'A'.repeat(4000)}!!!!`, { maxBytes: 100 }))).toBe('payload_too_large');
  });

  it('over warnAboveBytes: one warning that suggests artifactLink, and the content still goes out', async () => {
    const bytes = pngVariant(3, 120);
    const { options, warnings } = collecting({ warnAboveBytes: 100 });
    const block = await toContent(bytes, options);
    expect(payloadOf(block).equals(bytes)).toBe(true);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('artifactLink');
  });

  it('at or under warnAboveBytes: no warning', async () => {
    const { options, warnings } = collecting({ warnAboveBytes: PNG.length });
    await toContent(PNG, options);
    expect(warnings).toEqual([]);
  });

  it('a file over warnAboveBytes warns once, naming the file', async () => {
    await writeFile(join(base, 'warn-size.png'), pngVariant(4, 300));
    const { options, warnings } = collecting({ basePath: base, warnAboveBytes: 100 });
    const block = await toContent({ path: 'warn-size.png' }, options);
    expect(block.type).toBe('image');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('warn-size.png');
    expect(warnings[0]).toContain('artifactLink');
  });

  it('a file over maxBytes is payload_too_large, naming the file and artifactLink', async () => {
    await writeFile(join(base, 'too-big.png'), pngVariant(5, 300));
    const err = await failure(toContent({ path: 'too-big.png' }, { basePath: base, maxBytes: 100 }));
    expect(err.code).toBe('payload_too_large');
    expect(err.details).toEqual({ limitBytes: 100 });
    expect(err.message).toContain('too-big.png');
    expect(err.message).toContain('artifactLink');
  });

  it('a file over maxBytes is refused from its size alone, without being read', async () => {
    // A sparse 3 GiB file: reading it would fail with Node's own "file too large" RangeError (over
    // 2 GiB) or take seconds, so payload_too_large can only come from the size check before the read.
    const huge = join(base, 'huge.bin');
    await writeFile(huge, PNG);
    await truncate(huge, 3 * 1024 * MiB);
    try {
      const started = performance.now();
      const err = await failure(toContent({ path: 'huge.bin' }, { basePath: base }));
      expect(err.code).toBe('payload_too_large');
      expect(err.details).toEqual({ limitBytes: 50 * MiB });
      expect(err.message).toContain('3.0 GiB');
      expect(err.message).toContain('50 MiB');
      expect(performance.now() - started).toBeLessThan(2000);
    } finally {
      await rm(huge, { force: true });
    }
  });

  it('defaults: a warning above 10 MiB, a refusal above 50 MiB', async () => {
    const warnings: string[] = [];
    const atWarn = Buffer.concat([PNG, Buffer.alloc(10 * MiB - PNG.length)]);
    await toContent(atWarn, { onWarning: (m) => warnings.push(m) });
    expect(warnings).toEqual([]);
    const overWarn = Buffer.concat([PNG, Buffer.alloc(10 * MiB + 1 - PNG.length)]);
    const block = await toContent(overWarn, { onWarning: (m) => warnings.push(m) });
    expect(block.type).toBe('image');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('10 MiB');

    const atMax = Buffer.alloc(50 * MiB, 0x20);
    expect((await toContent(atMax, { onWarning: () => {} })).type).toBe('resource');
    const err = await failure(toContent(Buffer.alloc(50 * MiB + 1), { onWarning: () => {} }));
    expect(err.code).toBe('payload_too_large');
    expect(err.details).toEqual({ limitBytes: 50 * MiB });
  });
});

// ---------------------------------------------------------------------------------------------
// toContent: concurrency
// ---------------------------------------------------------------------------------------------

describe('toContent: concurrent calls', () => {
  it('20 different images at once (bytes, base64, data: URLs and files) each come back as their own bytes', async () => {
    const images = Array.from({ length: 20 }, (_, i) => pngVariant(i, 40 + i * 13));
    expect(new Set(images.map((b) => sha256(b))).size).toBe(20);
    const folder = await mkdtemp(join(base, 'concurrent-'));
    await Promise.all(images.map((b, i) => writeFile(join(folder, `image-${i}.png`), b)));
    const inputs: ContentInput[] = images.map((b, i) => {
      switch (i % 4) {
        case 0:
          return b;
        case 1:
          return b.toString('base64');
        case 2:
          return `data:image/png;base64,${b.toString('base64')}`;
        default:
          return { path: `image-${i}.png` };
      }
    });
    const blocks = await Promise.all(inputs.map((input) => toContent(input, { basePath: folder })));
    blocks.forEach((block, i) => {
      expect(block.type, `image ${i}`).toBe('image');
      expect(mimeOf(block), `image ${i}`).toBe('image/png');
      expect(payloadOf(block).equals(images[i]!), `image ${i}`).toBe(true);
      assertValidMcp(block);
    });
  });

  it('mixed formats at once keep their own types', async () => {
    const blocks = await Promise.all(FORMATS.map((name) => toContent(fixtures[name].bytes)));
    blocks.forEach((block, i) => {
      const { kind, mime, bytes } = fixtures[FORMATS[i]!];
      expect(block.type).toBe(kind);
      expect(mimeOf(block)).toBe(mime);
      expect(payloadOf(block).equals(bytes)).toBe(true);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// artifactLink
// ---------------------------------------------------------------------------------------------

function ref(overrides: Partial<ArtifactRef> = {}): ArtifactRef {
  const hash = sha256(fixtures.pdf.bytes);
  return ArtifactRefSchema.parse({
    id: artifactId('tableau.download_workbook', hash),
    mimeType: 'application/pdf',
    sizeBytes: fixtures.pdf.bytes.length,
    filename: 'Sales Dashboard.pdf',
    sha256: hash,
    namespace: 'tableau.download_workbook',
    scope: { tenantId: 'acme', sessionId: 's-1' },
    createdAt: '2025-01-01T00:00:00.000Z',
    ...overrides,
  });
}

describe('artifactLink', () => {
  it('points at artifact://{id} with the filename, MIME type and size', () => {
    const r = ref();
    const link = artifactLink(r);
    expect(link).toEqual({
      type: 'resource_link',
      uri: `artifact://${r.id}`,
      name: 'Sales Dashboard.pdf',
      mimeType: 'application/pdf',
      size: r.sizeBytes,
    });
    expect(ResourceLinkSchema.parse(link)).toEqual(link);
  });

  it('without a filename the name is the id', () => {
    const { filename: _dropped, ...rest } = ref();
    const link = artifactLink(rest);
    expect(link.name).toBe(rest.id);
    expect(link.uri).toBe(`artifact://${rest.id}`);
    expect(ResourceLinkSchema.safeParse(link).success).toBe(true);
  });

  it('title and description are added only when given', () => {
    const plain = artifactLink(ref());
    expect('title' in plain).toBe(false);
    expect('description' in plain).toBe(false);
    const described = artifactLink(ref(), { title: 'Q3 sales', description: 'The workbook as a PDF, 3 pages.' });
    expect(described.title).toBe('Q3 sales');
    expect(described.description).toBe('The workbook as a PDF, 3 pages.');
    expect(ResourceLinkSchema.parse(described)).toEqual(described);
    const empty = artifactLink(ref(), { title: '', description: '' });
    expect('title' in empty).toBe(false);
    expect('description' in empty).toBe(false);
  });

  it("carries none of the ref's internals (scope, sha256, url) and stays small", () => {
    const link = artifactLink(ref({ url: 'https://cdn.example.com/signed?sig=secret', meta: { internal: true } }));
    expect(Object.keys(link).sort()).toEqual(['mimeType', 'name', 'size', 'type', 'uri']);
    expect(JSON.stringify(link)).not.toContain('secret');
    expect(JSON.stringify(link).length).toBeLessThan(300);
  });

  it('an empty artifact has size 0; each ref gets its own uri', () => {
    const a = artifactLink(ref({ sizeBytes: 0, mimeType: 'text/plain' }));
    expect(a.size).toBe(0);
    expect(a.mimeType).toBe('text/plain');
    const other = ref({
      id: artifactId('art', sha256(PNG)),
      sha256: sha256(PNG),
      namespace: 'art',
      filename: 'chart.png',
      mimeType: 'image/png',
      sizeBytes: PNG.length,
    });
    expect(artifactLink(other).uri).toBe(`artifact://${other.id}`);
    expect(artifactLink(other).uri).not.toBe(artifactLink(ref()).uri);
  });
});
