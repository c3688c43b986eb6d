/**
 * Named versions in the service: a name in a scope (tenant, app, user, and a session or user-wide)
 * with versions 0, 1, 2…, each a reference to a content-addressed artifact. The numbers come from the
 * name's counter inside the put's own transaction (plans/put.ts), so concurrent saves never share
 * or skip one; reads, listings and deletes are plans/names.ts.
 */
import { ArtifactError } from '../core/errors.js';
import { checkNameKey, checkVersion, nameListLimit, nameOfCursor, namePageOf } from '../core/names.js';
import type { Logger } from '../core/logger.js';
import type { ArtifactRef, NamePage, PutOptions } from '../core/schemas.js';
import type { ArtifactRepository, NameKey, NameScope, RefRow } from '../db/repository.js';
import { discardBody } from './discard.js';
import type { Links } from './links.js';
import type { Puts } from './puts.js';
import type { Reads } from './reads.js';
import { rowToRef } from '../core/refs.js';
import type { DownloadEntity, DownloadUrl, DownloadUrlOptions, PutResult, RangeResolver } from './types.js';

const notFound = (key: NameKey, version?: number) =>
  new ArtifactError(
    'not_found',
    `No ${version === undefined ? 'version' : `version ${version}`} of ${JSON.stringify(key.name)} in app ${JSON.stringify(key.app)} in your scope. Check the name, the app and whether it is user-wide or in a session; list names with GET /v1/names/{app}.`,
  );

/** What named versions use: their rows, and the put, the read path and the links every artifact has. */
export interface NamedVersionDeps {
  repo: ArtifactRepository;
  now: () => number;
  logger: Logger;
  puts: Pick<Puts, 'stream'>;
  reads: Pick<Reads, 'body'>;
  links: Pick<Links, 'linkOf'>;
}

export function createNamedVersions(deps: NamedVersionDeps) {
  const { repo, now } = deps;

  async function findVersion(key: NameKey, version?: number): Promise<RefRow> {
    checkNameKey(key);
    checkVersion(version);
    const row = await repo.findVersion(key, version, now());
    if (!row) throw notFound(key, version);
    return row;
  }

  return {
    /**
     * Saves a new version of `key.name`, streaming the bytes like a put (same options, except that the
     * app is the namespace and the scope is the key's). Its number is the next of the name's counter.
     */
    async saveVersion(key: NameKey, body: ReadableStream<Uint8Array>, options: PutOptions = {}): Promise<PutResult> {
      try {
        checkNameKey(key);
      } catch (err) {
        await discardBody(body, err, deps.logger);
        throw err;
      }
      const { scope: _scope, namespace: _namespace, ...rest } = options;
      return deps.puts.stream(
        {
          tenantId: key.tenantId,
          ...(key.userId ? { userId: key.userId } : {}),
          ...(key.sessionId ? { sessionId: key.sessionId } : {}),
        },
        body,
        { ...rest, namespace: key.app },
        key.name,
      );
    },

    /** The version asked for, or the latest live one, as its reference (not_found otherwise). */
    async versionRef(key: NameKey, version?: number): Promise<ArtifactRef> {
      return rowToRef(await findVersion(key, version));
    },

    /** What a download of that version carries, without opening its bytes. */
    versionEntity: findVersion,

    /** The ArtifactRef of an entity versionEntity or versionBody gave. */
    refOfVersion(entity: DownloadEntity): ArtifactRef {
      return rowToRef(entity as RefRow);
    },

    /** The bytes of a version (or a range of them); `resolveRange` sees the size and hash first. */
    async versionBody(
      key: NameKey,
      version: number | undefined,
      resolveRange: RangeResolver | undefined,
      smallBytes: number,
    ) {
      const row = await findVersion(key, version);
      return deps.reads.body(row, resolveRange?.({ sizeBytes: row.sizeBytes, sha256: row.sha256 }), smallBytes);
    },

    /** A download link for a version, no token needed. */
    async versionUrl(key: NameKey, version: number | undefined, o: DownloadUrlOptions): Promise<DownloadUrl> {
      return deps.links.linkOf(key.tenantId, await findVersion(key, version), o);
    },

    /** Every live version of a name, oldest first (not_found when it has none). */
    async listVersions(key: NameKey): Promise<ArtifactRef[]> {
      checkNameKey(key);
      const rows = await repo.listVersions(key, now());
      if (rows.length === 0) throw notFound(key);
      return rows.map(rowToRef);
    },

    /** Names with a live version in a scope, by name, a page at a time. */
    async listNames(scope: NameScope, query: { cursor?: string; limit?: number } = {}): Promise<NamePage> {
      checkNameKey(scope);
      const limit = nameListLimit(query.limit);
      const after = query.cursor ? nameOfCursor(query.cursor) : '';
      return namePageOf(scope, await repo.listNames(scope, after, limit + 1, now()), limit);
    },

    /**
     * Deletes a name and every version (a later save starts again at 0); with `version`, that version
     * alone (the name keeps counting). False when there was nothing to delete.
     */
    async deleteName(key: NameKey, version?: number): Promise<boolean> {
      checkNameKey(key);
      const { existed, removed } = await repo.deleteName(key, now(), version);
      return version === undefined ? existed || removed.length > 0 : removed.length > 0;
    },
  };
}

export type NamedVersions = ReturnType<typeof createNamedVersions>;
