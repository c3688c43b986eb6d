/**
 * The CLI's client commands: put, get, ls, rm, url and token, over HTTP with the SDK's store.
 *
 * Settings come from flags, then the environment (ARTIFACT_STORE_URL, ARTIFACT_STORE_TOKEN,
 * ARTIFACT_STORE_SESSION), then a config file (--config, ARTIFACT_STORE_CONFIG, or
 * ~/.config/artifact-store/config.json: {"url", "token", "session"}), in that precedence.
 *
 * Exit codes: 0 done; 1 the service or the machine failed (the message says what to do); 2 bad usage;
 * 3 no such artifact (in your scope).
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, readFileSync, renameSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import mime from 'mime';
import { createHttpArtifactStore } from '../client/http-store.js';
import { loadConfig } from '../core/config.js';
import { isArtifactError } from '../core/errors.js';
import type { ArtifactRef, PutOptions } from '../core/schemas.js';
import { PERMS, type Perm } from '../core/perms.js';
import { mintToken } from '../http/tokens.js';
import { resolveNodeKeys } from '../node.js';

import { CliError, EXIT, type ClientCommand } from './cli-error.js';

export { CliError, EXIT };

interface Command {
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<void>;
}

const CONNECTION = {
  url: { type: 'string' },
  token: { type: 'string' },
  config: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const CONNECTION_HELP = `Connection (flags, then ARTIFACT_STORE_URL / _TOKEN / _SESSION, then the config file):
  --url URL        the service (default http://127.0.0.1:8787)
  --token T        a bearer token (npm start prints a dev one; \`artifact-store token\` mints one)
  --config FILE    JSON {"url", "token", "session"} (default ~/.config/artifact-store/config.json)`;

interface Connection {
  url: string;
  token: string;
  session?: string;
}

function readConfigFile(path: string | undefined): Partial<Connection> {
  const file = path ?? process.env.ARTIFACT_STORE_CONFIG ?? join(homedir(), '.config', 'artifact-store', 'config.json');
  if (!existsSync(file)) {
    if (path ?? process.env.ARTIFACT_STORE_CONFIG) throw new CliError(`Config file ${file} does not exist.`, EXIT.usage);
    return {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new CliError(`Config file ${file} is not valid JSON (${(err as Error).message}).`, EXIT.usage);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new CliError(`Config file ${file} must hold a JSON object like {"url": "…", "token": "…"}.`, EXIT.usage);
  const out: Partial<Connection> = {};
  for (const key of ['url', 'token', 'session'] as const) {
    const v = (parsed as Record<string, unknown>)[key];
    if (v === undefined) continue;
    if (typeof v !== 'string') throw new CliError(`Config file ${file}: "${key}" must be a string.`, EXIT.usage);
    out[key] = v;
  }
  return out;
}

function connection(values: Record<string, string | boolean | undefined>): Connection {
  const file = readConfigFile(values.config as string | undefined);
  const env = process.env;
  const url = (values.url as string | undefined) ?? env.ARTIFACT_STORE_URL ?? file.url ?? 'http://127.0.0.1:8787';
  const token = (values.token as string | undefined) ?? env.ARTIFACT_STORE_TOKEN ?? file.token;
  if (!token) throw new CliError('No token: pass --token, set ARTIFACT_STORE_TOKEN, or put "token" in the config file (npm start prints a dev token).', EXIT.usage);
  const session = (values.session as string | undefined) ?? env.ARTIFACT_STORE_SESSION ?? file.session;
  return { url, token, ...(session ? { session } : {}) };
}

function storeOf(c: Connection) {
  try {
    return createHttpArtifactStore({ baseUrl: c.url, token: c.token, ...(c.session ? { scope: { sessionId: c.session } } : {}) });
  } catch (err) {
    throw new CliError(`${(err as Error).message} (check --url or ARTIFACT_STORE_URL)`, EXIT.usage);
  }
}

/** "90", "30s", "15m", "1h", "2d" → seconds. */
export function parseDuration(text: string, what: string): number {
  const m = /^(\d{1,9})([smhd]?)$/.exec(text.trim());
  if (!m || Number(m[1]) === 0) throw new CliError(`${what} ${JSON.stringify(text)} is not a duration: use e.g. 90, 30s, 15m, 1h or 2d.`, EXIT.usage);
  return Number(m[1]) * { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[m[2] as '' | 's' | 'm' | 'h' | 'd'];
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** A progress bar on stderr, only when stderr is a terminal and the transfer is big enough to wait for. */
function progress(label: string, total: number | undefined, startAt = 0) {
  const tty = process.stderr.isTTY && (total === undefined || total >= 1024 * 1024);
  let done = startAt;
  let last = 0;
  const draw = (final = false) => {
    const now = Date.now();
    if (!tty || (!final && now - last < 100)) return;
    last = now;
    const width = 30;
    const share = total ? Math.min(1, done / total) : 0;
    const bar = total ? `[${'#'.repeat(Math.round(share * width)).padEnd(width, '.')}] ${Math.floor(share * 100)}%` : '';
    process.stderr.write(`\r${label} ${bar} ${formatBytes(done)}${total ? ` / ${formatBytes(total)}` : ''}\x1b[K${final ? '\n' : ''}`);
  };
  return {
    counter: new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        done += chunk.byteLength;
        draw();
        controller.enqueue(chunk);
      },
    }),
    finish: () => draw(true),
  };
}

/** Turns the SDK's errors into one line with the right exit code. */
function cliErrorOf(err: unknown): CliError {
  if (err instanceof CliError) return err;
  if (isArtifactError(err)) return new CliError(`${err.message} (${err.code})`, err.code === 'not_found' ? EXIT.notFound : EXIT.failed);
  const e = err as NodeJS.ErrnoException & { cause?: { code?: string } };
  const code = e?.code ?? e?.cause?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ECONNRESET' || /fetch failed/.test(e?.message ?? '')) {
    return new CliError(`Cannot reach the service (${code ?? e.message}): is it running, and is --url / ARTIFACT_STORE_URL right?`);
  }
  if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') return new CliError(e.message);
  return new CliError(e instanceof Error ? e.message : String(err));
}

const notFound = (id: string) => new CliError(`No artifact ${JSON.stringify(id)} in your scope: check the id (\`artifact-store ls\`), or it expired or was deleted.`, EXIT.notFound);

const COMMANDS: Record<ClientCommand, Command> = {
  put: {
    usage: `artifact-store put <file|-> [options]

Stores a file (or stdin, with -) and prints its ArtifactRef as JSON.
  --name NAME        filename to record (default: the file's name)
  --type MIME        media type (default: from the name's extension, else sniffed by the service)
  --namespace NS     e.g. the tool that produced it ("tableau.download_workbook")
  --ttl DURATION     how long to keep it: 3600, 30m, 1h, 7d
  --session S        the session to store it in (tenant-wide tokens)
  --quiet, -q        print only the id

${CONNECTION_HELP}

Examples:
  artifact-store put report.pdf
  curl -s https://example.com/chart.png | artifact-store put - --name chart.png --ttl 1d -q`,
    options: { ...CONNECTION, name: { type: 'string' }, type: { type: 'string' }, namespace: { type: 'string' }, ttl: { type: 'string' }, session: { type: 'string' }, quiet: { type: 'boolean', short: 'q' } },
    async run(values, [path]) {
      if (path === undefined) throw new CliError('put needs a file, or - for stdin: artifact-store put report.pdf', EXIT.usage);
      const c = connection(values);
      const fromStdin = path === '-';
      let size: number | undefined;
      if (!fromStdin) {
        let st;
        try {
          st = statSync(path);
        } catch {
          throw new CliError(`No file ${path}.`, EXIT.usage);
        }
        if (!st.isFile()) throw new CliError(`${path} is not a file.`, EXIT.usage);
        size = st.size;
      }
      const name = (values.name as string | undefined) ?? (fromStdin ? undefined : basename(path));
      const type = (values.type as string | undefined) ?? (name ? (mime.getType(name) ?? undefined) : undefined);
      const options: PutOptions = {
        ...(name ? { filename: name } : {}),
        ...(type ? { mimeType: type } : {}),
        ...(values.namespace ? { namespace: values.namespace as string } : {}),
        ...(values.ttl ? { ttl: parseDuration(values.ttl as string, '--ttl') } : {}),
      };
      const source = Readable.toWeb(fromStdin ? process.stdin : createReadStream(path)) as ReadableStream<Uint8Array>;
      const bar = progress(`put ${name ?? 'stdin'}`, size);
      const ref = await storeOf(c).putStream(source.pipeThrough(bar.counter), options);
      bar.finish();
      process.stdout.write(values.quiet ? `${ref.id}\n` : `${JSON.stringify(ref, null, 2)}\n`);
    },
  },

  get: {
    usage: `artifact-store get <id> [-o FILE]

Writes an artifact's bytes to stdout, or to FILE. A download to FILE goes to FILE.part first and is
renamed once complete and its sha256 checked; run the same command again after an interruption and
it resumes where it stopped (HTTP Range).
  --output, -o FILE  where to write (default: stdout)

${CONNECTION_HELP}

Examples:
  artifact-store get art_3f1c0a… -o report.pdf
  artifact-store get art_3f1c0a… | jq .`,
    options: { ...CONNECTION, output: { type: 'string', short: 'o' } },
    async run(values, [id]) {
      if (!id) throw new CliError('get needs an artifact id: artifact-store get art_… -o file', EXIT.usage);
      const store = storeOf(connection(values));
      const ref = await store.getRef(id);
      if (!ref) throw notFound(id);
      const out = values.output as string | undefined;
      if (!out) {
        const body = await store.getStream(id);
        if (!body) throw notFound(id);
        const bar = progress(`get ${ref.filename ?? id}`, ref.sizeBytes);
        await body.pipeThrough(bar.counter).pipeTo(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>).catch((err: unknown) => {
          if ((err as NodeJS.ErrnoException)?.code !== 'EPIPE') throw err;
        });
        bar.finish();
        return;
      }
      const part = `${out}.part`;
      const have = existsSync(part) ? statSync(part).size : 0;
      if (have > ref.sizeBytes) throw new CliError(`${part} is bigger than the artifact (${have} > ${ref.sizeBytes} bytes): delete it and run again.`);
      const hash = createHash('sha256');
      if (have > 0) for await (const chunk of createReadStream(part)) hash.update(chunk as Buffer);
      if (have < ref.sizeBytes) {
        const body = await store.getStream(id, { range: { start: have, end: ref.sizeBytes - 1 } });
        if (!body) throw notFound(id);
        const bar = progress(`get ${ref.filename ?? id}`, ref.sizeBytes, have);
        const hashing = new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            hash.update(chunk);
            controller.enqueue(chunk);
          },
        });
        const file = createWriteStream(part, { flags: have > 0 ? 'a' : 'w' });
        await body.pipeThrough(bar.counter).pipeThrough(hashing).pipeTo(new WritableStream({
          write: (chunk) => new Promise<void>((ok, fail) => file.write(chunk, (err) => (err ? fail(err) : ok()))),
          close: () => new Promise<void>((ok, fail) => file.end((err?: Error | null) => (err ? fail(err) : ok()))),
          abort: () => void file.destroy(),
        }));
        bar.finish();
      }
      const sha = hash.digest('hex');
      if (sha !== ref.sha256) throw new CliError(`${part} does not hash to the artifact's sha256 (${sha} ≠ ${ref.sha256}): it was not a download of this artifact. Delete it and run again.`);
      renameSync(part, out);
      process.stderr.write(`${out}: ${formatBytes(ref.sizeBytes)}, sha256 ${ref.sha256}\n`);
    },
  },

  ls: {
    usage: `artifact-store ls [options]

Lists artifacts in your scope, newest first, as a table (or JSON).
  --session S     only this session (tenant-wide tokens)
  --namespace NS  only this namespace
  --type PREFIX   only media types starting with this (image/, application/pdf)
  --limit N       at most N (default 50)
  --json          the ArtifactRefs as JSON

${CONNECTION_HELP}

Examples:
  artifact-store ls --session s-42
  artifact-store ls --type image/ --json | jq -r '.[].id'`,
    options: { ...CONNECTION, session: { type: 'string' }, namespace: { type: 'string' }, type: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
    async run(values) {
      const limit = values.limit === undefined ? 50 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new CliError(`--limit ${JSON.stringify(values.limit)} must be a whole number from 1 to 10000.`, EXIT.usage);
      const c = connection(values);
      const store = storeOf(c);
      const items: ArtifactRef[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.list({
          limit: Math.min(1000, limit - items.length),
          ...(c.session ? { sessionId: c.session } : {}),
          ...(values.namespace ? { namespace: values.namespace as string } : {}),
          ...(values.type ? { mimePrefix: values.type as string } : {}),
          ...(cursor ? { cursor } : {}),
        });
        items.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor && items.length < limit);
      if (values.json) {
        process.stdout.write(`${JSON.stringify(items, null, 2)}\n`);
        return;
      }
      if (items.length === 0) {
        process.stderr.write('No artifacts in this scope.\n');
        return;
      }
      const rows = items.map((r) => [r.id, r.filename ?? '', r.mimeType, formatBytes(r.sizeBytes), r.namespace, r.scope.sessionId ?? '', r.createdAt.slice(0, 19).replace('T', ' '), (r.expiresAt ?? '').slice(0, 19).replace('T', ' ')]);
      const head = ['ID', 'NAME', 'TYPE', 'SIZE', 'NAMESPACE', 'SESSION', 'CREATED (UTC)', 'EXPIRES (UTC)'];
      const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
      const line = (cells: string[]) => cells.map((cell, i) => (i === 3 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ').trimEnd();
      process.stdout.write(`${[line(head), ...rows.map(line)].join('\n')}\n`);
    },
  },

  rm: {
    usage: `artifact-store rm <id> [<id> …]

Deletes artifacts from your scope (their bytes go once nothing else holds them). Exits 3 if one
was not there; the others are still deleted.

${CONNECTION_HELP}

Examples:
  artifact-store rm art_3f1c0a…
  artifact-store ls --session s-42 --json | jq -r '.[].id' | xargs artifact-store rm`,
    options: { ...CONNECTION },
    async run(values, ids) {
      if (ids.length === 0) throw new CliError('rm needs at least one artifact id.', EXIT.usage);
      const store = storeOf(connection(values));
      const missing: string[] = [];
      for (const id of ids) {
        if (await store.delete(id)) process.stdout.write(`deleted ${id}\n`);
        else missing.push(id);
      }
      if (missing.length > 0) throw new CliError(`Not in your scope (already deleted or expired?): ${missing.join(', ')}`, EXIT.notFound);
    },
  },

  url: {
    usage: `artifact-store url <id> [--direct|--proxy] [--expires DURATION] [--inline]

Prints a download link a browser can open without a token.
  --proxy            through the service (the default)
  --direct           straight from S3 / R2 / the CDN (falls back to proxy where the blob store cannot presign)
  --expires DURATION how long the link works: 900, 15m, 1h (default 15m; never past the artifact's expiry)
  --inline           open in the browser rather than download

${CONNECTION_HELP}

Examples:
  artifact-store url art_3f1c0a… --expires 1h
  open "$(artifact-store url art_3f1c0a… --inline)"`,
    options: { ...CONNECTION, direct: { type: 'boolean' }, proxy: { type: 'boolean' }, expires: { type: 'string' }, inline: { type: 'boolean' } },
    async run(values, [id]) {
      if (!id) throw new CliError('url needs an artifact id.', EXIT.usage);
      if (values.direct && values.proxy) throw new CliError('Pass --direct or --proxy, not both.', EXIT.usage);
      const store = storeOf(connection(values));
      const link = await store.url!(id, {
        mode: values.direct ? 'direct' : 'proxy',
        ...(values.expires ? { expiresIn: parseDuration(values.expires as string, '--expires') } : {}),
        ...(values.inline ? { disposition: 'inline' as const } : {}),
      });
      process.stdout.write(`${link.url}\n`);
      if (values.direct && link.fetchMode !== 'direct') process.stderr.write('note: this blob store cannot presign; the link goes through the service.\n');
    },
  },

  token: {
    usage: `artifact-store token [options]

Mints a token with the configured signing secret: the first of ARTIFACT_STORE_JWT_SECRETS, or the dev
secret npm start keeps in the data dir. For development and scripts; production tokens come from your
own auth.
  --tenant T       tenant (default dev)
  --sub S          user id (default dev)
  --session S      bind the token to one session (it sees only that session)
  --trace T        bind it to one trace
  --perms LIST     comma separated: ${PERMS.join(', ')} (default read,write)
  --ttl DURATION   lifetime: 3600, 15m, 12h, 30d (default 1h)
  --data-dir DIR   where the dev secret lives (default ./data)
  --ui             print a link that opens the artifact browser signed in with the token
  --url URL        the service the --ui link points at (default: ARTIFACT_STORE_URL, the config
                   file, else http://127.0.0.1:8787)

Examples:
  export ARTIFACT_STORE_TOKEN=$(artifact-store token --perms read,write,admin --ttl 12h)
  artifact-store token --tenant acme --session s-42 --perms read
  artifact-store token --ui --session s-42 --perms read --ttl 8h`,
    options: { help: { type: 'boolean', short: 'h' }, tenant: { type: 'string' }, sub: { type: 'string' }, session: { type: 'string' }, trace: { type: 'string' }, perms: { type: 'string' }, ttl: { type: 'string' }, 'data-dir': { type: 'string' }, ui: { type: 'boolean' }, url: { type: 'string' }, config: { type: 'string' } },
    async run(values) {
      const perms = ((values.perms as string | undefined) ?? 'read,write').split(',').map((p) => p.trim()).filter(Boolean);
      const bad = perms.filter((p) => !PERMS.includes(p as Perm));
      if (bad.length > 0 || perms.length === 0) throw new CliError(`--perms must list some of ${PERMS.join(', ')} (got ${JSON.stringify(values.perms ?? '')}).`, EXIT.usage);
      const ttl = values.ttl ? parseDuration(values.ttl as string, '--ttl') : 3600;
      let config;
      try {
        config = loadConfig(process.env, values['data-dir'] ? { dataDir: values['data-dir'] as string } : {});
      } catch (err) {
        throw new CliError((err as Error).message.replace(/\n\s*/g, ' '), EXIT.usage);
      }
      const { hmacSecrets: secrets, devSecret } = await resolveNodeKeys(config).catch((err: Error) => {
        throw new CliError(err.message);
      });
      const key = devSecret ?? secrets[0];
      if (!key) throw new CliError('No signing secret: set ARTIFACT_STORE_JWT_SECRETS (kid:secret).', EXIT.usage);
      const token = await mintToken(key, {
        tenant: (values.tenant as string | undefined) ?? 'dev',
        sub: (values.sub as string | undefined) ?? 'dev',
        perms: perms as Perm[],
        ...(values.session ? { session: values.session as string } : {}),
        ...(values.trace ? { trace: values.trace as string } : {}),
      }, ttl, { issuer: config.jwtIssuer, audience: config.jwtAudience });
      if (!values.ui) {
        process.stdout.write(`${token}\n`);
        return;
      }
      const base = (values.url as string | undefined) ?? process.env.ARTIFACT_STORE_URL ?? readConfigFile(values.config as string | undefined).url ?? 'http://127.0.0.1:8787';
      // The fragment never reaches the server, and the page clears it from the address bar.
      process.stdout.write(`${base.replace(/\/+$/, '')}/ui#token=${token}\n`);
    },
  },
};

/** Runs one client command; throws CliError (one line, exit code) on failure. */
export async function runClientCommand(name: ClientCommand, argv: string[]): Promise<void> {
  const command = COMMANDS[name];
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: command.options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new CliError(`${(err as Error).message.split(/(?<=\.) /)[0]} See artifact-store ${name} --help.`, EXIT.usage);
  }
  if (parsed.values.help) {
    process.stdout.write(`${command.usage}\n`);
    return;
  }
  try {
    await command.run(parsed.values as Record<string, string | boolean | undefined>, parsed.positionals);
  } catch (err) {
    throw cliErrorOf(err);
  }
}
