/**
 * The CLI's commands that talk to a running service over HTTP with the SDK's store: put, get, ls,
 * rm, url and end-session. They load nothing of the server.
 *
 * Exit codes: 0 done; 1 the service or the machine failed (the message says what to do); 2 bad usage;
 * 3 no such artifact (in your scope).
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, renameSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { Readable, Writable } from 'node:stream';
import mime from 'mime';
import type { BigUploadOptions } from '../client/http-direct-upload.js';
import { createHttpArtifactStore } from '../client/http-store.js';
import { formatBytes } from '../core/bytes.js';
import { isArtifactId } from '../core/ids.js';
import { type ArtifactRef, LIST_SORTS, type ListSort, type PutOptions } from '../core/schemas.js';
import { checkSessionId } from '../core/sessions.js';
import { BIG_FILE_BYTES, putBigFile } from './big-put.js';
import { CliError, EXIT, type RemoteCommand } from './cli-error.js';
import { HELP } from './help.js';
import { progress } from './progress.js';
import { type Command, CONNECTION, type Connection, connection, parseDuration, runCommand } from './connection.js';

function storeOf(c: Connection, uploads?: BigUploadOptions) {
  try {
    return createHttpArtifactStore({
      baseUrl: c.url,
      token: c.token,
      ...(c.session ? { scope: { sessionId: c.session } } : {}),
      ...(uploads ? { uploads } : {}),
    });
  } catch (err) {
    throw new CliError(`${(err as Error).message} (check --url or ARTIFACT_STORE_URL)`, EXIT.usage);
  }
}

/**
 * APP/NAME[@VERSION] as a name and its version (undefined: the latest). The app is up to the first
 * '/'; a trailing @<digits> (or @latest) is the version.
 */
function nameTarget(text: string, what: string): { app: string; name: string; version?: number } {
  const slash = text.indexOf('/');
  if (slash < 1 || slash === text.length - 1)
    throw new CliError(
      `${what}: give an artifact id, or APP/NAME[@VERSION] (for example my-agent/report.pdf@2).`,
      EXIT.usage,
    );
  const app = text.slice(0, slash);
  const rest = text.slice(slash + 1);
  const at = /@(\d{1,15}|latest)$/.exec(rest);
  const name = at ? rest.slice(0, at.index) : rest;
  if (!name) throw new CliError(`${what}: the name is empty in ${JSON.stringify(text)}.`, EXIT.usage);
  return { app, name, ...(at && at[1] !== 'latest' ? { version: Number(at[1]) } : {}) };
}

const notFound = (id: string) =>
  new CliError(
    `No artifact ${JSON.stringify(id)} in your scope: check the id (\`artifact-store ls\`), or it expired or was deleted.`,
    EXIT.notFound,
  );

const COMMANDS: Record<RemoteCommand, Command> = {
  put: {
    usage: HELP.put,
    options: {
      ...CONNECTION,
      name: { type: 'string' },
      type: { type: 'string' },
      namespace: { type: 'string' },
      ttl: { type: 'string' },
      session: { type: 'string' },
      to: { type: 'string' },
      'user-wide': { type: 'boolean' },
      resume: { type: 'boolean' },
      quiet: { type: 'boolean', short: 'q' },
    },
    async run(values, [path]) {
      if (path === undefined)
        throw new CliError('put needs a file, or - for stdin: artifact-store put report.pdf', EXIT.usage);
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
        ...(values.ttl
          ? { ttl: values.ttl === 'never' ? ('never' as const) : parseDuration(values.ttl as string, '--ttl') }
          : {}),
      };
      const target = values.to === undefined ? undefined : nameTarget(values.to as string, '--to');
      if (target?.version !== undefined)
        throw new CliError('--to names where the next version goes: APP/NAME, without @VERSION.', EXIT.usage);
      if (values.resume && (fromStdin || target))
        throw new CliError(
          "--resume needs a file (not stdin) and no --to: it resumes by the file's bytes.",
          EXIT.usage,
        );
      if (!fromStdin && !target && size !== undefined && size > BIG_FILE_BYTES) {
        const how = { resume: Boolean(values.resume), label: `put ${name}` };
        const ref = await putBigFile((uploads) => storeOf(c, uploads), path, size, options, how);
        process.stdout.write(values.quiet ? `${ref.id}\n` : `${JSON.stringify(ref, null, 2)}\n`);
        return;
      }
      const source = Readable.toWeb(fromStdin ? process.stdin : createReadStream(path)) as ReadableStream<Uint8Array>;
      const bar = progress(`put ${name ?? 'stdin'}`, size);
      const store = storeOf(c);
      const ref = target
        ? await store.names!.saveVersion(
            { app: target.app, name: target.name, ...(values['user-wide'] ? { userWide: true } : {}) },
            source.pipeThrough(bar.counter),
            options,
          )
        : await store.putStream(source.pipeThrough(bar.counter), options);
      bar.finish();
      const short = target ? `${target.app}/${target.name}@${ref.version}` : ref.id;
      process.stdout.write(values.quiet ? `${short}\n` : `${JSON.stringify(ref, null, 2)}\n`);
    },
  },

  get: {
    usage: HELP.get,
    options: {
      ...CONNECTION,
      output: { type: 'string', short: 'o' },
      session: { type: 'string' },
      'user-wide': { type: 'boolean' },
    },
    async run(values, [id]) {
      if (!id) throw new CliError('get needs an artifact id: artifact-store get art_… -o file', EXIT.usage);
      const store = storeOf(connection(values));
      const target = isArtifactId(id) ? undefined : nameTarget(id, 'get');
      const named = target && {
        app: target.app,
        name: target.name,
        ...(values['user-wide'] ? { userWide: true } : {}),
      };
      const ref = named ? await store.names!.versionRef(named, target!.version) : await store.getRef(id);
      if (!ref) throw notFound(id);
      // A named version is read by its number from here on: a save meanwhile changes nothing.
      const streamOf = async (range?: { start: number; end: number }) =>
        named
          ? ((await store.names!.loadVersionStream(named, ref.version, range ? { range } : {}))?.stream ?? null)
          : store.getStream(id, range ? { range } : {});
      const out = values.output as string | undefined;
      if (!out) {
        const body = await streamOf();
        if (!body) throw notFound(id);
        const bar = progress(`get ${ref.filename ?? id}`, ref.sizeBytes);
        await body
          .pipeThrough(bar.counter)
          .pipeTo(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>)
          .catch((err: unknown) => {
            if ((err as NodeJS.ErrnoException)?.code !== 'EPIPE') throw err;
          });
        bar.finish();
        return;
      }
      const part = `${out}.part`;
      const have = existsSync(part) ? statSync(part).size : 0;
      if (have > ref.sizeBytes)
        throw new CliError(
          `${part} is bigger than the artifact (${have} > ${ref.sizeBytes} bytes): delete it and run again.`,
        );
      const hash = createHash('sha256');
      if (have > 0) for await (const chunk of createReadStream(part)) hash.update(chunk as Buffer);
      if (have < ref.sizeBytes) {
        const body = await streamOf({ start: have, end: ref.sizeBytes - 1 });
        if (!body) throw notFound(id);
        const bar = progress(`get ${ref.filename ?? id}`, ref.sizeBytes, have);
        const hashing = new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            hash.update(chunk);
            controller.enqueue(chunk);
          },
        });
        const file = createWriteStream(part, { flags: have > 0 ? 'a' : 'w' });
        await body
          .pipeThrough(bar.counter)
          .pipeThrough(hashing)
          .pipeTo(
            new WritableStream({
              write: (chunk) => new Promise<void>((ok, fail) => file.write(chunk, (err) => (err ? fail(err) : ok()))),
              close: () => new Promise<void>((ok, fail) => file.end((err?: Error | null) => (err ? fail(err) : ok()))),
              abort: () => void file.destroy(),
            }),
          );
        bar.finish();
      }
      const sha = hash.digest('hex');
      if (sha !== ref.sha256)
        throw new CliError(
          `${part} does not hash to the artifact's sha256 (${sha} ≠ ${ref.sha256}): it was not a download of this artifact. Delete it and run again.`,
        );
      renameSync(part, out);
      process.stderr.write(`${out}: ${formatBytes(ref.sizeBytes)}, sha256 ${ref.sha256}\n`);
    },
  },

  ls: {
    usage: HELP.ls,
    options: {
      ...CONNECTION,
      session: { type: 'string' },
      namespace: { type: 'string' },
      type: { type: 'string' },
      search: { type: 'string' },
      sort: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
    },
    async run(values) {
      const sort = values.sort as string | undefined;
      if (sort !== undefined && !(LIST_SORTS as readonly string[]).includes(sort))
        throw new CliError(`--sort ${JSON.stringify(sort)} must be one of ${LIST_SORTS.join(', ')}.`, EXIT.usage);
      const limit = values.limit === undefined ? 50 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
        throw new CliError(
          `--limit ${JSON.stringify(values.limit)} must be a whole number from 1 to 10000.`,
          EXIT.usage,
        );
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
          ...(values.search ? { q: values.search as string } : {}),
          ...(sort ? { sort: sort as ListSort } : {}),
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
      const rows = items.map((r) => [
        r.id,
        r.filename ?? '',
        r.mimeType,
        formatBytes(r.sizeBytes),
        r.namespace,
        r.scope.sessionId ?? '',
        r.createdAt.slice(0, 19).replace('T', ' '),
        (r.expiresAt ?? '').slice(0, 19).replace('T', ' '),
      ]);
      const head = ['ID', 'NAME', 'TYPE', 'SIZE', 'NAMESPACE', 'SESSION', 'CREATED (UTC)', 'EXPIRES (UTC)'];
      const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
      const line = (cells: string[]) =>
        cells
          .map((cell, i) => (i === 3 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
          .join('  ')
          .trimEnd();
      process.stdout.write(`${[line(head), ...rows.map(line)].join('\n')}\n`);
    },
  },

  rm: {
    usage: HELP.rm,
    options: { ...CONNECTION },
    async run(values, ids) {
      if (ids.length === 0) throw new CliError('rm needs at least one artifact id.', EXIT.usage);
      const store = storeOf(connection(values));
      const missing: string[] = [];
      for (const id of ids) {
        if (await store.delete(id)) process.stdout.write(`deleted ${id}\n`);
        else missing.push(id);
      }
      if (missing.length > 0)
        throw new CliError(`Not in your scope (already deleted or expired?): ${missing.join(', ')}`, EXIT.notFound);
    },
  },

  url: {
    usage: HELP.url,
    options: {
      ...CONNECTION,
      direct: { type: 'boolean' },
      proxy: { type: 'boolean' },
      expires: { type: 'string' },
      inline: { type: 'boolean' },
    },
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
      if (values.direct && link.fetchMode !== 'direct')
        process.stderr.write('note: this blob store cannot presign; the link goes through the service.\n');
    },
  },

  'end-session': {
    usage: HELP['end-session'],
    options: { ...CONNECTION, session: { type: 'string' }, json: { type: 'boolean' } },
    async run(values, positionals) {
      const [asked, ...extra] = positionals;
      if (extra.length > 0 || (asked !== undefined && values.session !== undefined && asked !== values.session))
        throw new CliError('end-session ends one session: artifact-store end-session s-42', EXIT.usage);
      const c = connection(values);
      const session = asked ?? c.session;
      if (session === undefined)
        throw new CliError(
          'end-session needs a session: artifact-store end-session s-42 (or --session, ARTIFACT_STORE_SESSION).',
          EXIT.usage,
        );
      try {
        checkSessionId(session);
      } catch (err) {
        throw new CliError((err as Error).message, EXIT.usage);
      }
      const report = await storeOf(c).endSession(session);
      if (values.json) {
        process.stdout.write(`${JSON.stringify(report)}\n`);
        return;
      }
      const { refs, bytes, versions } = report;
      const named = versions > 0 ? `, ${versions} of them named version${versions === 1 ? '' : 's'}` : '';
      process.stdout.write(
        `ended session ${session}: ${refs} reference${refs === 1 ? '' : 's'} (${formatBytes(bytes)})${named}\n`,
      );
    },
  },
};

/** Runs one of the commands that talk to a running service; throws CliError (one line, exit code). */
export function runRemoteCommand(name: RemoteCommand, argv: string[]): Promise<void> {
  return runCommand(COMMANDS[name], name, argv);
}
