import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isActiveType } from '../src/core/active-types.js';
import { decodeBase64, encodeBase64 } from '../src/core/base64.js';
import { ConfigSchema, ENV_NAMES, loadConfig } from '../src/core/config.js';
import {
  ArtifactError,
  ERROR_CODES,
  ERROR_STATUS,
  errors,
  isArtifactError,
  isErrorCode,
  type ErrorCode,
} from '../src/core/errors.js';
import { contentDisposition, decodeExtValue, headerUtf8, sanitizeFilename } from '../src/core/filename.js';
import { sha256Hex, toHex } from '../src/core/hash.js';
import {
  artifactId,
  assertNamespace,
  DEFAULT_NAMESPACE,
  isArtifactId,
  NAMESPACE_PATTERN,
  namespaceFromToolName,
  parseArtifactId,
} from '../src/core/ids.js';
import { parseRange } from '../src/core/range.js';

function codeOf(fn: () => unknown): ErrorCode | 'no error' | 'not an ArtifactError' {
  try {
    fn();
  } catch (err) {
    return err instanceof ArtifactError ? err.code : 'not an ArtifactError';
  }
  return 'no error';
}

const SHA = createHash('sha256').update('hello').digest('hex');

describe('errors', () => {
  it('derives the status from the code, and the wire body is { code, message }', () => {
    const e = errors.badRequest('nope');
    expect(e).toBeInstanceOf(Error);
    expect(isArtifactError(e)).toBe(true);
    expect(e.status).toBe(400);
    expect(e.toJSON()).toEqual({ code: 'bad_request', message: 'nope' });
    const big = errors.payloadTooLarge(10);
    expect(big.status).toBe(413);
    expect(big.toJSON()).toEqual({ code: 'payload_too_large', message: big.message, details: { limitBytes: 10 } });
    expect(errors.backendUnavailable('down').retryAfter).toBe(1);
    for (const code of ERROR_CODES) expect(new ArtifactError(code, 'x').status).toBe(ERROR_STATUS[code]);
    expect(isErrorCode('not_found')).toBe(true);
    expect(isErrorCode('toString')).toBe(false);
    expect(isErrorCode('teapot')).toBe(false);
  });

  it('not_found does not depend on why the artifact is missing', () => {
    expect(errors.notFound('art_x').message).toBe(errors.notFound('art_x').message);
    expect(errors.notFound('art_x').status).toBe(404);
  });
});

describe('hash helpers', () => {
  it('sha256Hex matches node:crypto and toHex is lowercase, zero padded', async () => {
    const bytes = randomBytes(1000);
    expect(await sha256Hex(bytes)).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(toHex(new Uint8Array([0, 1, 0xab, 0xff]))).toBe('0001abff');
  });
});

describe('ids', () => {
  it('artifactId is {namespace}_{first 24 hex of sha256}', () => {
    expect(artifactId('art', SHA)).toBe(`art_${SHA.slice(0, 24)}`);
    expect(artifactId('tableau.download_workbook', SHA)).toBe(`tableau.download_workbook_${SHA.slice(0, 24)}`);
    expect(artifactId('art', SHA)).toBe(artifactId('art', SHA));
    expect(artifactId('a', SHA)).not.toBe(artifactId('b', SHA));
  });

  it('accepts valid namespaces', () => {
    for (const ns of [
      'a',
      'art',
      '0',
      'tableau.download_workbook',
      'my-tool',
      'x'.repeat(128),
      'a.b_c-d9',
      'UPPER',
      'observation.SearchTool',
      'tool_artifact.Node.field',
    ]) {
      expect(assertNamespace(ns)).toBe(ns);
      expect(isArtifactId(artifactId(ns, SHA))).toBe(true);
    }
  });

  it('rejects bad namespaces with bad_request', () => {
    for (const ns of ['Bad NS', '', 'x'.repeat(129), '../x', 'a/b', 'spa ce', 'emoji😀', 'a\nb', 'a:b', 'tab\t']) {
      expect(
        codeOf(() => assertNamespace(ns)),
        JSON.stringify(ns),
      ).toBe('bad_request');
      expect(
        codeOf(() => artifactId(ns, SHA)),
        JSON.stringify(ns),
      ).toBe('bad_request');
    }
  });

  it('isArtifactId / parseArtifactId read the hex part from the end', () => {
    const id = artifactId('my_tool_v2', SHA);
    expect(parseArtifactId(id)).toEqual({ namespace: 'my_tool_v2', hexPrefix: SHA.slice(0, 24) });
    for (const bad of [
      '',
      'art',
      `art_${SHA.slice(0, 23)}`,
      `art_${SHA.slice(0, 25)}`,
      `art_${SHA.slice(0, 24).toUpperCase()}`,
      `_${SHA.slice(0, 24)}`,
      `../x_${SHA.slice(0, 24)}`,
    ]) {
      expect(isArtifactId(bad), bad).toBe(false);
      expect(parseArtifactId(bad), bad).toBeUndefined();
    }
  });

  it('namespaceFromToolName lower-cases, replaces other characters with -, prefixes the server', () => {
    expect(namespaceFromToolName('download_workbook', 'tableau')).toBe('tableau.download_workbook');
    expect(namespaceFromToolName('Download Workbook', 'Tableau')).toBe('tableau.download-workbook');
    expect(namespaceFromToolName('browser_take_screenshot')).toBe('browser_take_screenshot');
    expect(namespaceFromToolName('get/file:raw')).toBe('get-file-raw');
    expect(namespaceFromToolName('résumé')).toBe('r-sum-');
    expect(namespaceFromToolName('')).toBe(DEFAULT_NAMESPACE);
    expect(namespaceFromToolName('x'.repeat(100))).toBe('x'.repeat(64));
    expect(namespaceFromToolName('t'.repeat(60), 'server')).toHaveLength(64);
  });

  it('namespaceFromToolName always yields a valid namespace', () => {
    const samples = ['', ' ', '...', 'A B C', '工具', 'x'.repeat(200), 'mcp__server__tool', 'Tool\u0000Name', '😀😀'];
    for (const tool of samples) {
      for (const server of [undefined, '', 'Srv One', 'x'.repeat(80)]) {
        const ns = namespaceFromToolName(tool, server);
        expect(ns, `${JSON.stringify(tool)} / ${JSON.stringify(server)}`).toMatch(NAMESPACE_PATTERN);
        expect(() => assertNamespace(ns)).not.toThrow();
      }
    }
  });
});

describe('decodeBase64', () => {
  const bytes = randomBytes(301);
  const std = Buffer.from(bytes).toString('base64');
  const url = Buffer.from(bytes).toString('base64url');

  it('decodes standard base64, padded and unpadded', () => {
    expect(Buffer.from(decodeBase64(std).bytes).equals(bytes)).toBe(true);
    expect(Buffer.from(decodeBase64(std.replace(/=+$/, '')).bytes).equals(bytes)).toBe(true);
    expect(decodeBase64(std).mimeType).toBeUndefined();
    expect(Buffer.from(decodeBase64('aGk=').bytes).toString()).toBe('hi');
    expect(Buffer.from(decodeBase64('aGk').bytes).toString()).toBe('hi');
    expect(decodeBase64('').bytes.byteLength).toBe(0);
  });

  it('decodes base64url without padding', () => {
    expect(url).not.toContain('=');
    expect(Buffer.from(decodeBase64(url).bytes).equals(bytes)).toBe(true);
    // Bytes whose encodings differ between the two alphabets.
    const tricky = new Uint8Array([0xfb, 0xff, 0xbf, 0xfe]);
    expect(Buffer.from(tricky).toString('base64')).toMatch(/[+/]/);
    expect(Array.from(decodeBase64(Buffer.from(tricky).toString('base64url')).bytes)).toEqual(Array.from(tricky));
    expect(Array.from(decodeBase64(Buffer.from(tricky).toString('base64')).bytes)).toEqual(Array.from(tricky));
  });

  it('decodes data: URLs and reports their media type', () => {
    const png = decodeBase64(`data:image/png;base64,${std}`);
    expect(png.mimeType).toBe('image/png');
    expect(Buffer.from(png.bytes).equals(bytes)).toBe(true);
    const noType = decodeBase64(`data:;base64,${std}`);
    expect(noType.mimeType).toBeUndefined();
    expect(Buffer.from(noType.bytes).equals(bytes)).toBe(true);
    expect(decodeBase64(`data:application/pdf;base64,${url}`).mimeType).toBe('application/pdf');
    // Parameters are part of the media type (RFC 2397); a bare charset means text/plain.
    expect(decodeBase64(`data:text/csv;charset=utf-8;base64,${std}`).mimeType).toBe('text/csv;charset=utf-8');
    expect(decodeBase64(`data:;charset=utf-8;base64,${std}`).mimeType).toBe('text/plain;charset=utf-8');
  });

  it('ignores line wrapping (GitHub 60 chars with \\n, PEM-style 76 chars with \\r\\n)', () => {
    const big = randomBytes(2000);
    const b64 = Buffer.from(big).toString('base64');
    const github = `${b64.match(/.{1,60}/g)!.join('\n')}\n`;
    expect(github.split('\n')[0]).toHaveLength(60);
    expect(Buffer.from(decodeBase64(github).bytes).equals(big)).toBe(true);
    const pem = b64.match(/.{1,76}/g)!.join('\r\n');
    expect(Buffer.from(decodeBase64(pem).bytes).equals(big)).toBe(true);
    expect(Buffer.from(decodeBase64(`data:image/jpeg;base64,${github}`).bytes).equals(big)).toBe(true);
  });

  it('round-trips with encodeBase64', () => {
    for (const n of [0, 1, 2, 3, 4, 5, 100, 65_537]) {
      const b = randomBytes(n);
      expect(encodeBase64(b)).toBe(Buffer.from(b).toString('base64'));
      expect(Buffer.from(decodeBase64(encodeBase64(b)).bytes).equals(b)).toBe(true);
    }
  });

  it('refuses malformed input with bad_request, never a partial decode', () => {
    const malformed = [
      'abc$',
      'a!bc',
      'A',
      'AAAAA',
      'AB=C',
      'AB===',
      'ABC==',
      'AB=',
      '=AAA',
      'ab+c-d_e',
      'aGVsbG8gd29ybGQ*',
      'data:image/png,aGk=',
      'data:image/png;base64',
      'data:text/plain;charset=utf-8,hello',
      `data:image/png;base64,${std}!`,
      '%%%%',
      'aGk=aGk=',
      // Lengths a multiple of 4, which the one-decode path takes first: it must still refuse them.
      'AA!A',
      'AA=A',
      'A===',
      'AAA\u00e9',
      'AA-+',
    ];
    for (const input of malformed)
      expect(
        codeOf(() => decodeBase64(input)),
        JSON.stringify(input),
      ).toBe('bad_request');
  });
});

describe('isActiveType', () => {
  it('knows a type by its essence, whatever its case and parameters, the same on every ask', () => {
    const cases: [string, boolean][] = [
      ['text/html', true],
      ['TEXT/HTML; charset=utf-8', true],
      [' image/svg+xml ;x=1', true],
      ['application/vnd.example+xml', true],
      ['text/javascript', true],
      ['image/png', false],
      ['application/pdf', false],
      ['text/plain; charset=utf-8', false],
      ['text/html-not', false],
      ['', false],
    ];
    for (let round = 0; round < 2; round++)
      for (const [type, active] of cases) expect([type, isActiveType(type)]).toEqual([type, active]);
  });

  it('answers types past its memory of them the same way', () => {
    for (let i = 0; i < 600; i++) {
      expect(isActiveType(`application/x-${i}+xml`)).toBe(true);
      expect(isActiveType(`application/x-${i}`)).toBe(false);
    }
    expect(isActiveType('application/x-599+xml')).toBe(true);
  });
});

describe('parseRange', () => {
  const size = 1000;

  it('no header: whole body', () => {
    expect(parseRange(undefined, size)).toBeUndefined();
    expect(parseRange(null, size)).toBeUndefined();
  });

  it('bytes=START-END, inclusive, with END clamped to the size', () => {
    expect(parseRange('bytes=0-9', size)).toEqual({ start: 0, end: 9 });
    expect(parseRange('bytes=0-0', size)).toEqual({ start: 0, end: 0 });
    expect(parseRange('bytes=999-999', size)).toEqual({ start: 999, end: 999 });
    expect(parseRange('bytes=0-999', size)).toEqual({ start: 0, end: 999 });
    expect(parseRange('bytes=500-5000', size)).toEqual({ start: 500, end: 999 });
    expect(parseRange('  bytes=1-2  ', size)).toEqual({ start: 1, end: 2 });
  });

  it('bytes=START- runs to the end', () => {
    expect(parseRange('bytes=10-', size)).toEqual({ start: 10, end: 999 });
    expect(parseRange('bytes=0-', size)).toEqual({ start: 0, end: 999 });
    expect(parseRange('bytes=999-', size)).toEqual({ start: 999, end: 999 });
  });

  it('bytes=-SUFFIX is the last SUFFIX bytes, the whole body when longer', () => {
    expect(parseRange('bytes=-1', size)).toEqual({ start: 999, end: 999 });
    expect(parseRange('bytes=-100', size)).toEqual({ start: 900, end: 999 });
    expect(parseRange('bytes=-1000', size)).toEqual({ start: 0, end: 999 });
    expect(parseRange('bytes=-5000', size)).toEqual({ start: 0, end: 999 });
  });

  it('several ranges: undefined (the whole body is served)', () => {
    expect(parseRange('bytes=0-1,5-6', size)).toBeUndefined();
    expect(parseRange('bytes=0-1, 5-6', size)).toBeUndefined();
    expect(parseRange('bytes=-5,0-', size)).toBeUndefined();
  });

  it('malformed: invalid_range carrying the size', () => {
    for (const header of [
      '',
      'bytes',
      'bytes=',
      'bytes=-',
      'bytes=a-b',
      'items=0-1',
      '0-9',
      'bytes=1-2-3',
      'bytes=5-2',
      'bytes=0x1-2',
      'bytes=1.5-2',
      'bytes=0-1,a',
    ]) {
      let caught: unknown;
      try {
        parseRange(header, size);
      } catch (err) {
        caught = err;
      }
      expect(caught, JSON.stringify(header)).toBeInstanceOf(ArtifactError);
      expect((caught as ArtifactError).code, JSON.stringify(header)).toBe('invalid_range');
      expect((caught as ArtifactError).status).toBe(416);
      expect((caught as ArtifactError).details).toEqual({ sizeBytes: size });
    }
  });

  it('unsatisfiable: invalid_range', () => {
    expect(codeOf(() => parseRange('bytes=1000-', size))).toBe('invalid_range');
    expect(codeOf(() => parseRange('bytes=1000-1001', size))).toBe('invalid_range');
    expect(codeOf(() => parseRange('bytes=5000-6000', size))).toBe('invalid_range');
    expect(codeOf(() => parseRange('bytes=-0', size))).toBe('invalid_range');
    expect(codeOf(() => parseRange('bytes=0-', 0))).toBe('invalid_range');
    expect(codeOf(() => parseRange('bytes=-1', 0))).toBe('invalid_range');
    expect(codeOf(() => parseRange('bytes=0-0', 0))).toBe('invalid_range');
  });
});

describe('sanitizeFilename', () => {
  it('keeps a plain display name', () => {
    expect(sanitizeFilename(undefined)).toBeUndefined();
    expect(sanitizeFilename('report.pdf')).toBe('report.pdf');
    expect(sanitizeFilename('Sales "Q3" (final).pdf')).toBe('Sales "Q3" (final).pdf');
    expect(sanitizeFilename('naïve résumé.pdf')).toBe('naïve résumé.pdf');
    expect(sanitizeFilename('  padded.txt  ')).toBe('padded.txt');
  });

  it('strips directory parts, forward and backward slashes alike', () => {
    expect(sanitizeFilename('a/b/c.pdf')).toBe('c.pdf');
    expect(sanitizeFilename('/etc/passwd')).toBe('passwd');
    expect(sanitizeFilename('../../etc/passwd')).toBe('passwd');
    expect(sanitizeFilename('C:\\Users\\me\\report.pdf')).toBe('report.pdf');
    expect(sanitizeFilename('..\\..\\windows\\system.ini')).toBe('system.ini');
    expect(sanitizeFilename('mixed/dir\\file.txt')).toBe('file.txt');
  });

  it('returns undefined when nothing usable is left', () => {
    for (const input of ['', '   ', '.', '..', 'dir/', 'a/..', '..\\', '/', '\\']) {
      expect(sanitizeFilename(input), JSON.stringify(input)).toBeUndefined();
    }
  });

  it('refuses control characters (CR, LF, NUL, DEL, C1) with bad_request', () => {
    for (const input of [
      'a\r\nb.pdf',
      'evil\nSet-Cookie: x',
      'a\rb',
      'nul\u0000.pdf',
      'tab\t.pdf',
      'del\u007f',
      'c1\u0085',
      'dir/\nfile',
    ]) {
      expect(
        codeOf(() => sanitizeFilename(input)),
        JSON.stringify(input),
      ).toBe('bad_request');
    }
  });

  it('refuses bidirectional overrides and line separators that disguise an extension', () => {
    for (const input of ['invoice\u202Efdp.exe', 'a\u2066b.pdf', 'x\u200Fy.pdf', 'line\u2028sep.txt']) {
      expect(
        codeOf(() => sanitizeFilename(input)),
        JSON.stringify(input),
      ).toBe('bad_request');
    }
    // Ordinary non-ASCII (including a zero-width joiner in an emoji sequence) stays.
    expect(sanitizeFilename('family \u{1F468}\u200D\u{1F469}.png')).toBe('family \u{1F468}\u200D\u{1F469}.png');
  });

  it('refuses names over 255 characters', () => {
    expect(sanitizeFilename('a'.repeat(255))).toHaveLength(255);
    expect(codeOf(() => sanitizeFilename('a'.repeat(256)))).toBe('bad_request');
    // Only the base name counts.
    expect(sanitizeFilename(`${'d'.repeat(300)}/ok.txt`)).toBe('ok.txt');
  });
});

describe('contentDisposition', () => {
  it('plain ASCII names in a quoted filename', () => {
    expect(contentDisposition('inline', undefined)).toBe('inline');
    expect(contentDisposition('attachment', '')).toBe('attachment');
    expect(contentDisposition('attachment', 'report.pdf')).toBe('attachment; filename="report.pdf"');
    expect(contentDisposition('inline', 'a b;c.txt')).toBe('inline; filename="a b;c.txt"');
  });

  it('quotes and backslashes cannot end the quoted string; the exact name goes in filename*', () => {
    const h = contentDisposition('attachment', 'a"b\\c.pdf');
    expect(h).toBe(`attachment; filename="a_b_c.pdf"; filename*=UTF-8''a%22b%5Cc.pdf`);
    const quoted = /filename="([^"]*)"/.exec(h)![1]!;
    expect(quoted).not.toMatch(/["\\]/);
    const evil = contentDisposition('inline', 'x"; filename="evil.html');
    expect(evil.match(/filename="/g)).toHaveLength(1);
    expect(evil.startsWith('inline; filename="x_; filename=_evil.html"; filename*=')).toBe(true);
  });

  it("non-ASCII names: an ASCII fallback plus filename*=UTF-8''…", () => {
    const h = contentDisposition('attachment', 'naïve résumé.pdf');
    expect(h).toBe(`attachment; filename="na_ve r_sum_.pdf"; filename*=UTF-8''na%C3%AFve%20r%C3%A9sum%C3%A9.pdf`);
    expect(decodeExtValue(/filename\*=(.*)$/.exec(h)![1]!)).toBe('naïve résumé.pdf');
    const cjk = contentDisposition('inline', "報告'(1)*.pdf");
    expect(cjk).toContain(`filename*=UTF-8''%E5%A0%B1%E5%91%8A%27%281%29%2A.pdf`);
    expect(decodeExtValue(/filename\*=(.*)$/.exec(cjk)![1]!)).toBe("報告'(1)*.pdf");
  });

  it('never contains CR, LF or any non-printable byte, whatever the name', () => {
    const names = [
      'a\r\nSet-Cookie: x=1',
      'nul\u0000',
      '\u2028line sep',
      'emoji 😀.png',
      'tab\there',
      '\u0085next',
      'ok.txt',
      '"\\"\\',
      'é\r',
    ];
    for (const name of names) {
      for (const type of ['inline', 'attachment'] as const) {
        const h = contentDisposition(type, name);
        expect(h, JSON.stringify(name)).toMatch(/^[\x20-\x7e]+$/);
        expect(h).not.toMatch(/[\r\n]/);
        expect(h.startsWith(`${type}; filename="`)).toBe(true);
      }
    }
  });
});

describe('header filename helpers', () => {
  it('decodeExtValue decodes RFC 8187 values and passes plain ones through', () => {
    expect(decodeExtValue("UTF-8''na%C3%AFve.pdf")).toBe('naïve.pdf');
    expect(decodeExtValue("utf-8'en'a%20b")).toBe('a b');
    expect(decodeExtValue('plain.pdf')).toBe('plain.pdf');
    expect(codeOf(() => decodeExtValue("UTF-8''%E0%A4%A"))).toBe('bad_request');
    expect(codeOf(() => decodeExtValue("ISO-8859-1''caf%E9"))).toBe('bad_request');
  });

  it('headerUtf8 repairs raw UTF-8 sent as latin1 and leaves other values alone', () => {
    const raw = Buffer.from('naïve.pdf', 'utf8').toString('latin1');
    expect(raw).not.toBe('naïve.pdf');
    expect(headerUtf8(raw)).toBe('naïve.pdf');
    expect(headerUtf8('plain.pdf')).toBe('plain.pdf');
    expect(headerUtf8('caf\u00e9')).toBe('caf\u00e9');
  });
});

describe('loadConfig', () => {
  it('defaults run on one machine with nothing set', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      env: 'development',
      host: '127.0.0.1',
      port: 8787,
      dataDir: './data',
      blobDriver: 'fs',
      maxArtifactBytes: 50 * 1024 * 1024,
      defaultTtlSeconds: 3600,
      maxTtlSeconds: 7 * 24 * 3600,
      jwtSecrets: [],
      corsOrigins: [],
      logLevel: 'info',
      shutdownGraceMs: 30_000,
      sqliteBusyTimeoutMs: 5000,
      sqliteCacheBytes: 4 * 1024 * 1024,
      touchFlushMs: 1000,
    });
    expect(c.dbPath).toBeUndefined();
    expect(c.blobDir).toBeUndefined();
    expect(c.jwksUrl).toBeUndefined();
  });

  it('parses every kind of value from ARTIFACT_STORE_* variables', () => {
    const c = loadConfig({
      ARTIFACT_STORE_ENV: 'test',
      ARTIFACT_STORE_HOST: '0.0.0.0',
      ARTIFACT_STORE_PORT: '9000',
      ARTIFACT_STORE_DATA_DIR: '/var/lib/as',
      ARTIFACT_STORE_DB_PATH: '/var/lib/as/db.sqlite',
      ARTIFACT_STORE_BLOB_DRIVER: 'memory',
      ARTIFACT_STORE_MAX_ARTIFACT_BYTES: '1048576',
      ARTIFACT_STORE_DEFAULT_TTL_SECONDS: '60',
      ARTIFACT_STORE_MAX_TTL_SECONDS: '120',
      ARTIFACT_STORE_JWT_SECRETS: 'k1:secret-one, k2:secret-two,,',
      ARTIFACT_STORE_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json',
      ARTIFACT_STORE_JWT_ISSUER: 'https://idp.example.com',
      ARTIFACT_STORE_JWT_AUDIENCE: 'artifact-store',
      ARTIFACT_STORE_CORS_ORIGINS: 'https://a.example, https://b.example',
      ARTIFACT_STORE_LOG_LEVEL: 'warn',
      ARTIFACT_STORE_TOUCH_FLUSH_MS: '0',
      ARTIFACT_STORE_SQLITE_CACHE_BYTES: '1048576',
    });
    expect(c).toMatchObject({
      sqliteCacheBytes: 1048576,
      env: 'test',
      host: '0.0.0.0',
      port: 9000,
      dataDir: '/var/lib/as',
      dbPath: '/var/lib/as/db.sqlite',
      blobDriver: 'memory',
      maxArtifactBytes: 1048576,
      defaultTtlSeconds: 60,
      maxTtlSeconds: 120,
      jwtSecrets: ['k1:secret-one', 'k2:secret-two'],
      jwksUrl: 'https://idp.example.com/.well-known/jwks.json',
      jwtIssuer: 'https://idp.example.com',
      jwtAudience: 'artifact-store',
      corsOrigins: ['https://a.example', 'https://b.example'],
      logLevel: 'warn',
      touchFlushMs: 0,
    });
  });

  it('refuses an ARTIFACT_STORE_* variable it does not know, naming it and the closest setting', () => {
    expect(() => loadConfig({ ARTIFACT_STORE_MAX_TTL: '60' })).toThrow(
      'Invalid configuration:\n  ARTIFACT_STORE_MAX_TTL: not a setting. Did you mean "ARTIFACT_STORE_MAX_TTL_SECONDS"?',
    );
    expect(() => loadConfig({ ARTIFACT_STORE_XYZZY: '1', ARTIFACT_STORE_PORT: 'eighty' })).toThrow(
      /ARTIFACT_STORE_XYZZY: not a setting\.\n {2}ARTIFACT_STORE_PORT: /,
    );
    // The CLI's client commands and the dev-worker script read these; they are not service settings.
    expect(
      loadConfig({
        ARTIFACT_STORE_URL: 'http://x',
        ARTIFACT_STORE_TOKEN: 't',
        ARTIFACT_STORE_SESSION: 's',
        ARTIFACT_STORE_CONFIG: 'c.json',
        ARTIFACT_STORE_DEV_VARS: '.dev.vars',
        ARTIFACT_STORE_DEV_STATE: 'st',
      }).port,
    ).toBe(8787);
  });

  it('refuses an unknown key in tenant policies, naming the tenant, the key and the closest one', () => {
    expect(() =>
      loadConfig({ ARTIFACT_STORE_TENANT_POLICIES: JSON.stringify({ acme: { maxSessionByte: 10 } }) }),
    ).toThrow(
      'ARTIFACT_STORE_TENANT_POLICIES: tenant "acme": unknown key "maxSessionByte". Did you mean "maxSessionBytes"?',
    );
  });

  it('empty variables count as unset; NODE_ENV=production implies production', () => {
    expect(loadConfig({ ARTIFACT_STORE_PORT: '' }).port).toBe(8787);
    expect(loadConfig({ NODE_ENV: 'production' }).env).toBe('production');
    expect(loadConfig({ NODE_ENV: 'production', ARTIFACT_STORE_ENV: 'test' }).env).toBe('test');
    expect(loadConfig({ NODE_ENV: 'test' }).env).toBe('development');
  });

  it('explicit overrides win over the environment', () => {
    const c = loadConfig({ ARTIFACT_STORE_PORT: '9000', ARTIFACT_STORE_HOST: 'h' }, { port: 1234 });
    expect(c.port).toBe(1234);
    expect(c.host).toBe('h');
  });

  it('an invalid value fails with an error naming the variable', () => {
    const cases: Record<string, string> = {
      ARTIFACT_STORE_PORT: 'eighty',
      ARTIFACT_STORE_BLOB_DRIVER: 'floppy',
      ARTIFACT_STORE_MAX_ARTIFACT_BYTES: '-1',
      ARTIFACT_STORE_DEFAULT_TTL_SECONDS: '1.5',
      ARTIFACT_STORE_LOG_LEVEL: 'verbose',
      ARTIFACT_STORE_JWKS_URL: 'not a url',
      ARTIFACT_STORE_ENV: 'staging',
    };
    for (const [name, value] of Object.entries(cases)) {
      expect(() => loadConfig({ [name]: value }), name).toThrow(name);
    }
    expect(() => loadConfig({ ARTIFACT_STORE_PORT: '70000' })).toThrow(/ARTIFACT_STORE_PORT/);
    // Several problems are all reported.
    let message = '';
    try {
      loadConfig({ ARTIFACT_STORE_PORT: 'x', ARTIFACT_STORE_LOG_LEVEL: 'loud' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('ARTIFACT_STORE_PORT');
    expect(message).toContain('ARTIFACT_STORE_LOG_LEVEL');
  });

  it('refuses S3, CDN and link settings that do not fit together, naming the variable', () => {
    const cases: [Record<string, string>, string][] = [
      [{ ARTIFACT_STORE_BLOB_DRIVER: 's3' }, 'ARTIFACT_STORE_S3_BUCKET'],
      [
        { ARTIFACT_STORE_BLOB_DRIVER: 's3', ARTIFACT_STORE_S3_BUCKET: 'b', ARTIFACT_STORE_S3_PREFIX: 'no-slash' },
        'ARTIFACT_STORE_S3_PREFIX',
      ],
      [
        {
          ARTIFACT_STORE_BLOB_DRIVER: 's3',
          ARTIFACT_STORE_S3_BUCKET: 'b',
          ARTIFACT_STORE_S3_ACCESS_KEY_ID: 'only-half',
        },
        'ARTIFACT_STORE_S3_ACCESS_KEY_ID',
      ],
      [
        {
          ARTIFACT_STORE_BLOB_DRIVER: 's3',
          ARTIFACT_STORE_S3_BUCKET: 'b',
          ARTIFACT_STORE_CDN_URL: 'https://d1.cloudfront.net',
        },
        'ARTIFACT_STORE_CDN_URL',
      ],
      [
        {
          ARTIFACT_STORE_CDN_URL: 'https://d1.cloudfront.net',
          ARTIFACT_STORE_CDN_KEY_PAIR_ID: 'K1',
          ARTIFACT_STORE_CDN_PRIVATE_KEY_FILE: '/k.pem',
        },
        'ARTIFACT_STORE_CDN_URL',
      ],
      [{ ARTIFACT_STORE_S3_ENDPOINT: 'not a url' }, 'ARTIFACT_STORE_S3_ENDPOINT'],
      [
        { ARTIFACT_STORE_URL_DEFAULT_TTL_SECONDS: '7200', ARTIFACT_STORE_URL_MAX_TTL_SECONDS: '3600' },
        'ARTIFACT_STORE_URL_DEFAULT_TTL_SECONDS',
      ],
      [{ ARTIFACT_STORE_URL_MAX_TTL_SECONDS: '999999999' }, 'ARTIFACT_STORE_URL_MAX_TTL_SECONDS'],
      [{ ARTIFACT_STORE_PUBLIC_URL: 'files.example.com' }, 'ARTIFACT_STORE_PUBLIC_URL'],
    ];
    for (const [env, name] of cases) expect(() => loadConfig(env), JSON.stringify(env)).toThrow(name);
    const ok = loadConfig({
      ARTIFACT_STORE_BLOB_DRIVER: 's3',
      ARTIFACT_STORE_S3_BUCKET: 'b',
      ARTIFACT_STORE_S3_ENDPOINT: 'http://127.0.0.1:9000',
      ARTIFACT_STORE_PUBLIC_URL: 'https://files.example.com/',
    });
    expect(ok).toMatchObject({
      blobDriver: 's3',
      s3Bucket: 'b',
      s3Region: 'us-east-1',
      s3Prefix: '',
      publicUrl: 'https://files.example.com',
    });
  });

  it('every setting has an ARTIFACT_STORE_* variable', () => {
    expect(Object.keys(ENV_NAMES).sort()).toEqual(Object.keys(ConfigSchema.shape).sort());
    for (const name of Object.values(ENV_NAMES)) expect(name).toMatch(/^ARTIFACT_STORE_[A-Z0-9_]+$/);
  });
});
