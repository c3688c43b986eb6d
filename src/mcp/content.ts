import mime from 'mime';
import type { AudioContent, EmbeddedResource, ImageContent, ResourceLink } from '@modelcontextprotocol/sdk/types.js';
import { cleanBase64, CorruptBase64Error, decodeClean, type CleanBase64 } from './detect.js';
import { encodeBase64 } from '../core/base64.js';
import { formatBytes } from '../core/bytes.js';
import { ArtifactError, errors } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import type { ArtifactRef } from '../core/schemas.js';
import { fileTypeFromBuffer } from 'file-type';

/**
 * Helpers for people writing MCP servers: turn bytes, base64, data: URLs or files into the right MCP
 * content block, and point at stored artifacts with resource_link instead of inlining base64.
 */

const MiB = 1024 * 1024;

export type ContentInput =
  | Uint8Array
  | ArrayBuffer
  /** base64, base64url or a data: URL. */
  | string
  /** A file, resolved under `basePath`. */
  | { path: string }
  /** An already-typed payload: data as base64 or bytes. */
  | { type: 'image' | 'audio' | 'resource'; data: string | Uint8Array; mimeType?: string };

export interface ToContentOptions {
  /** Wins over everything else. Default: magic bytes, then the file extension, then application/octet-stream. */
  mimeType?: string;
  /** Where relative paths start, and the folder no path may leave (after symlinks). Default: the working directory. */
  basePath?: string;
  /** Larger payloads still go out, with a warning. Default 10 MiB. */
  warnAboveBytes?: number;
  /** Larger payloads are refused. Default 50 MiB. */
  maxBytes?: number;
  /** Default console.warn. */
  onWarning?: (message: string) => void;
  /** URI of an EmbeddedResource; default `file://…` for files, else `urn:sha256:{hex}` of the bytes. */
  uri?: string;
}

export type BinaryContent = ImageContent | AudioContent | EmbeddedResource;

/**
 * Bytes, base64, a data: URL, a file or a typed payload → an MCP ImageContent (image/*), AudioContent
 * (audio/*) or EmbeddedResource blob (anything else). Errors say what to do; nothing is read or
 * decoded past the size limit, and a path that leaves `basePath` (through `..` or a symlink) is
 * refused. A typed `image` / `audio` payload whose MIME type is not image/* / audio/* goes out as an
 * EmbeddedResource blob, with a warning.
 *
 * @example
 * return { content: [await toContent({ path: 'out/chart.png' }, { basePath: workDir })] };
 */
export async function toContent(input: ContentInput, options: ToContentOptions = {}): Promise<BinaryContent> {
  const maxBytes = options.maxBytes ?? 50 * MiB;
  const warnAbove = options.warnAboveBytes ?? 10 * MiB;
  const warn = options.onWarning ?? ((m: string) => console.warn(m));

  let bytes: Uint8Array;
  let declared = options.mimeType;
  let forced: 'image' | 'audio' | 'resource' | undefined;
  let fileUri: string | undefined;
  let extensionMime: string | undefined;
  let what = 'content';

  const refuseOverMax = (size: number) => {
    if (size > maxBytes) {
      throw tooLarge(
        `${what} is ${formatBytes(size)}, over the ${formatBytes(maxBytes)} limit. Store it as an artifact and return artifactLink(ref), or raise maxBytes.`,
        maxBytes,
      );
    }
  };
  // The decoded size of base64 is known from its length: a payload over the limit is refused
  // before its bytes are allocated.
  const decodeChecked = (text: string, label: string) => {
    const parsed = parseBase64(text, label);
    refuseOverMax(parsed.clean.byteLength);
    const decoded = decodeParsed(parsed.clean, label);
    return parsed.mimeType ? { bytes: decoded, mimeType: parsed.mimeType } : { bytes: decoded };
  };

  if (input instanceof Uint8Array || input instanceof ArrayBuffer) {
    bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
  } else if (typeof input === 'string') {
    const decoded = decodeChecked(input, 'string');
    bytes = decoded.bytes;
    declared ??= decoded.mimeType;
  } else if (input && typeof input === 'object' && 'path' in input && typeof input.path === 'string') {
    const file = await readUnderBase(input.path, options.basePath, maxBytes, warnAbove, warn);
    bytes = file.bytes;
    fileUri = file.uri;
    extensionMime = mime.getType(file.realPath) ?? undefined;
    what = `File ${input.path}`;
  } else if (
    input &&
    typeof input === 'object' &&
    'data' in input &&
    (input.type === 'image' || input.type === 'audio' || input.type === 'resource')
  ) {
    forced = input.type;
    declared ??= input.mimeType;
    bytes = typeof input.data === 'string' ? decodeChecked(input.data, `${input.type} data`).bytes : input.data;
  } else {
    throw errors.badRequest(
      'toContent needs bytes (Buffer / Uint8Array), a base64 string or data: URL, { path }, or { type, data, mimeType }.',
    );
  }

  if (bytes.byteLength === 0)
    throw errors.badRequest(`${what} is empty: an MCP content block needs at least one byte.`);
  refuseOverMax(bytes.byteLength);
  if (bytes.byteLength > warnAbove && fileUri === undefined)
    warn(
      `${what} is ${formatBytes(bytes.byteLength)} (over ${formatBytes(warnAbove)}): inline base64 this large fills a model's context; consider artifactLink().`,
    );

  const magic = declared ? undefined : await fileTypeFromBuffer(bytes).catch(() => undefined);
  const mimeType = declared ?? magic?.mime ?? extensionMime ?? 'application/octet-stream';
  if (declared && !mime.getExtension(declared.split(';')[0]!.trim()))
    warn(`Unrecognised MIME type ${JSON.stringify(declared)}: the content is sent as declared; check the type.`);

  // MIME types are case-insensitive (RFC 2045): IMAGE/PNG is an image. The type goes out as given.
  const essence = mimeType.split(';')[0]!.trim().toLowerCase();
  const detectedKind = essence.startsWith('image/') ? 'image' : essence.startsWith('audio/') ? 'audio' : 'resource';
  let kind = forced ?? detectedKind;
  if ((forced === 'image' || forced === 'audio') && detectedKind !== forced) {
    // An ImageContent / AudioContent whose type is not image/* / audio/* is one no host can render:
    // the bytes go out as an EmbeddedResource blob, which carries any type.
    kind = 'resource';
    const hint = declared
      ? 'Pass the right mimeType, or type "resource".'
      : `Pass mimeType if these bytes really are ${forced}, or type "resource".`;
    warn(
      `A payload of type "${forced}" has MIME type ${mimeType}, not ${forced}/*: it is sent as an embedded resource instead. ${hint}`,
    );
  }
  const data = encodeBase64(bytes);
  if (kind === 'image') return { type: 'image', data, mimeType };
  if (kind === 'audio') return { type: 'audio', data, mimeType };
  const uri = options.uri ?? fileUri ?? `urn:sha256:${await sha256Hex(bytes)}`;
  return { type: 'resource', resource: { uri, mimeType, blob: data } };
}

const tooLarge = (message: string, limitBytes: number) =>
  new ArtifactError('payload_too_large', message, { details: { limitBytes } });

/** The data: URL header and cleaned base64 of a string, checked but not decoded yet. */
function parseBase64(text: string, what: string): { clean: CleanBase64; mimeType?: string } {
  let body = text;
  let mimeType: string | undefined;
  if (text.startsWith('data:')) {
    const comma = text.indexOf(',');
    const header = comma > 0 ? text.slice(5, comma).split(';') : [];
    if (comma < 0 || header.pop()?.toLowerCase() !== 'base64')
      throw errors.badRequest(`Invalid data: URL in ${what}: use data:<mime>;base64,<payload>.`);
    mimeType = header[0]?.trim() || undefined;
    body = text.slice(comma + 1);
  }
  try {
    const clean = cleanBase64(body.trim());
    return mimeType ? { clean, mimeType } : { clean };
  } catch (err) {
    throw invalidBase64(err, what);
  }
}

function decodeParsed(clean: CleanBase64, what: string): Uint8Array {
  try {
    return decodeClean(clean);
  } catch (err) {
    throw invalidBase64(err, what);
  }
}

function invalidBase64(err: unknown, what: string): unknown {
  if (err instanceof CorruptBase64Error)
    return errors.badRequest(
      `Invalid base64 data in ${what}: ${err.message}. Ensure the data is base64-encoded (or pass the bytes themselves).`,
    );
  return err;
}

async function readUnderBase(
  path: string,
  basePath: string | undefined,
  maxBytes: number,
  warnAbove: number,
  warn: (m: string) => void,
): Promise<{ bytes: Uint8Array; uri: string; realPath: string }> {
  const { realpath, stat, readFile } = await import('node:fs/promises');
  const nodePath = await import('node:path');
  const { pathToFileURL } = await import('node:url');
  const baseInput = basePath ?? process.cwd();
  if (baseInput.includes('\0'))
    throw errors.badRequest(
      `Base path ${JSON.stringify(baseInput)} contains a NUL byte, which no file path can hold — check how basePath is built.`,
    );
  const lexicalBase = nodePath.resolve(baseInput);
  let base: string;
  try {
    base = await realpath(lexicalBase);
  } catch {
    throw errors.badRequest(`Base path not found: ${baseInput}. Pass an existing folder as basePath.`);
  }
  if (path.includes('\0'))
    throw errors.badRequest(
      `Path ${JSON.stringify(path)} contains a NUL byte, which no file path can hold — check how the path is built.`,
    );
  if (path === '') throw errors.badRequest(`The path is empty — pass a file path relative to ${base}.`);
  /** Where `p` lies relative to folder `dir`: under it, the folder itself, or outside. */
  const place = (dir: string, p: string): 'inside' | 'self' | 'outside' => {
    const rel = nodePath.relative(dir, p);
    if (rel === '') return 'self';
    // Only ".." itself and "../…" climb out: "..chart.png" is a file name like any other.
    return rel === '..' || rel.startsWith(`..${nodePath.sep}`) || nodePath.isAbsolute(rel) ? 'outside' : 'inside';
  };
  const baseItself = () =>
    errors.badRequest(`Path ${path} is the base folder itself — pass a file path under ${base}.`);
  let target = nodePath.resolve(base, path);
  // An absolute path spelled through the configured base (which may be reached through a symlink,
  // such as /tmp on macOS) is read as the same place under the resolved base. The decision that
  // counts is still the realpath check below.
  if (nodePath.isAbsolute(path) && place(base, target) === 'outside' && place(lexicalBase, target) !== 'outside') {
    target = nodePath.join(base, nodePath.relative(lexicalBase, target));
  }
  const where = place(base, target);
  if (where === 'self') throw baseItself();
  if (where === 'outside')
    throw errors.forbidden(`Path ${path} leaves the base folder ${base}; only files under it can be read.`);
  let real: string;
  try {
    real = await realpath(target);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw new ArtifactError('not_found', `File not found: ${path} — check the path relative to ${base}.`);
    if (code === 'EACCES' || code === 'EPERM')
      throw errors.forbidden(`Permission denied reading ${path} — the server process cannot read it.`);
    if (code === 'ELOOP') throw errors.badRequest(`Too many symbolic links resolving ${path}.`);
    throw err;
  }
  const realPlace = place(base, real);
  if (realPlace === 'self') throw baseItself();
  if (realPlace === 'outside')
    throw errors.forbidden(
      `Path ${path} resolves (through a symbolic link) to ${real}, outside the base folder ${base}; refused.`,
    );
  const info = await stat(real);
  if (!info.isFile())
    throw errors.badRequest(`${path} is not a regular file (a directory or device?) — pass a file path.`);
  if (info.size > maxBytes) {
    throw tooLarge(
      `File ${path} is ${formatBytes(info.size)}, over the ${formatBytes(maxBytes)} limit. Store it as an artifact and return artifactLink(ref), or raise maxBytes.`,
      maxBytes,
    );
  }
  if (info.size > warnAbove)
    warn(
      `File ${path} is ${formatBytes(info.size)} (over ${formatBytes(warnAbove)}): inline base64 this large fills a model's context; consider artifactLink().`,
    );
  let buf: Buffer;
  try {
    buf = await readFile(real);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM')
      throw errors.forbidden(`Permission denied reading ${path} — the server process cannot read it.`);
    throw err;
  }
  return {
    bytes: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength),
    uri: pathToFileURL(real).href,
    realPath: real,
  };
}

/**
 * A resource_link block pointing at a stored artifact (`artifact://{id}`), so a server returns a few
 * hundred bytes instead of inline base64. Hosts read it through the artifact MCP server or the SDK.
 */
export function artifactLink(ref: ArtifactRef, options: { description?: string; title?: string } = {}): ResourceLink {
  return {
    type: 'resource_link',
    uri: `artifact://${ref.id}`,
    name: ref.filename ?? ref.id,
    mimeType: ref.mimeType,
    size: ref.sizeBytes,
    ...(options.title ? { title: options.title } : {}),
    ...(options.description ? { description: options.description } : {}),
  };
}
