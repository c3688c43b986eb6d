/**
 * Named versions, the same SQL for SQLite and D1: a version is a reference with a name and a number
 * (written by the put plan, plans/put.ts), in the app that is its artifact's namespace. Reads see
 * live versions only; deleting a name removes every version and the name's counter.
 */
import type { NameKey, NameScope } from '../repository.js';
import { removePlanned, type RemovalPlan } from './removal.js';
import { REF_COLUMNS, REF_JOIN, type Params, type Stmt } from './sql.js';

/** The versions of one name, in its scope and app. */
const VERSIONS_OF = `r.tenant_id = @tenantId AND r.user_id = @userId AND r.session_id = @sessionId
  AND r.trace_id = '' AND r.name = @name AND a.namespace = @app`;

export const keyParams = (key: NameKey): Params => ({
  tenantId: key.tenantId,
  app: key.app,
  userId: key.userId,
  sessionId: key.sessionId,
  name: key.name,
});

/** The live version asked for, or the latest live one. */
export function findVersionSql(key: NameKey, version: number | undefined, now: number): Stmt {
  return {
    sql: `SELECT ${REF_COLUMNS} FROM ${REF_JOIN}
      WHERE ${VERSIONS_OF} AND r.expires_at > @now ${version === undefined ? '' : 'AND r.version = @version'}
      ORDER BY r.version DESC LIMIT 1`,
    params: { ...keyParams(key), now, ...(version === undefined ? {} : { version }) },
  };
}

/** Every live version, oldest first. */
export function listVersionsSql(key: NameKey, now: number): Stmt {
  return {
    sql: `SELECT ${REF_COLUMNS} FROM ${REF_JOIN} WHERE ${VERSIONS_OF} AND r.expires_at > @now ORDER BY r.version`,
    params: { ...keyParams(key), now },
  };
}

/** Names with a live version, by name, after `after`. */
export function listNamesSql(scope: NameScope, after: string, limit: number, now: number): Stmt {
  return {
    sql: `SELECT r.name AS name, max(r.version) AS latestVersion, count(*) AS versions, max(r.created_at) AS updatedAt
      FROM ${REF_JOIN}
      WHERE r.tenant_id = @tenantId AND r.user_id = @userId AND r.session_id = @sessionId AND r.trace_id = ''
        AND r.name > @after AND a.namespace = @app AND r.expires_at > @now
      GROUP BY r.name ORDER BY r.name LIMIT @limit`,
    params: {
      tenantId: scope.tenantId,
      app: scope.app,
      userId: scope.userId,
      sessionId: scope.sessionId,
      after,
      limit,
      now,
    },
  };
}

/**
 * deleteName: every version (live or not) goes with an artifact.deleted event, then the name's row,
 * so a later save starts again at 0. With `version`, that version alone goes (live or not) and the
 * name stays, so its numbers are never given again. The first statement reports whether the name
 * existed.
 */
export function deleteNamePlan(key: NameKey, now: number, version?: number): RemovalPlan & { existedAt: number } {
  const params = { ...keyParams(key), now, ...(version === undefined ? {} : { version }) };
  const existed: Stmt = {
    sql: `SELECT count(*) AS n FROM names WHERE tenant_id = @tenantId AND app = @app AND user_id = @userId
      AND session_id = @sessionId AND name = @name`,
    params,
  };
  const plan: Stmt = {
    sql: `INSERT INTO evict_plan (ref_id, pass, size_bytes, tenant_id, artifact_id)
      SELECT r.ref_id, 0, r.size_bytes, r.tenant_id, r.artifact_id FROM ${REF_JOIN} WHERE ${VERSIONS_OF}${
        version === undefined ? '' : ' AND r.version = @version'
      }`,
    params,
  };
  const tail = removePlanned('artifact.deleted', '@now', '', params);
  const dropName: Stmt = {
    sql: `DELETE FROM names WHERE tenant_id = @tenantId AND app = @app AND user_id = @userId
      AND session_id = @sessionId AND name = @name`,
    params,
  };
  const stmts = [existed, plan, ...tail.stmts, ...(version === undefined ? [dropName] : [])];
  return { stmts, removedAt: 2 + tail.removedAt, existedAt: 0 };
}
