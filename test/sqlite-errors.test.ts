/**
 * The SQLite repository reports its backend's contention in the service's words: a database another
 * process holds locked past the busy timeout is backend_unavailable (503, Retry-After), and the layers
 * above never see SQLITE_BUSY (src/db/sqlite/errors.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { isArtifactError } from '../src/core/errors.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { translateSqliteError } from '../src/db/sqlite/errors.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('SQLite errors', () => {
  it('a write while another process holds the lock is backend_unavailable with Retry-After, its cause kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlite-errors-'));
    dirs.push(dir);
    const path = join(dir, 'artifacts.db');
    const repo = createSqliteRepository({ path, busyTimeoutMs: 20 });
    const other = new Database(path);
    other.exec('BEGIN EXCLUSIVE');
    try {
      const err = await repo.touch([1], Date.now()).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isArtifactError(err) && err.code).toBe('backend_unavailable');
      expect(isArtifactError(err) && err.retryAfter).toBe(1);
      expect((err as Error).message).toBe('The database is busy. Retry shortly.');
      expect(String((err as { cause?: { code?: string } }).cause?.code)).toMatch(/^SQLITE_BUSY/);
    } finally {
      other.exec('ROLLBACK');
      other.close();
      await repo.close();
    }
  });

  it('finds the code on a cause (drizzle wraps driver errors) and leaves other errors as they are', () => {
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY_SNAPSHOT' });
    const wrapped = new Error('Failed query', { cause: busy });
    expect((translateSqliteError(wrapped) as { code?: string }).code).toBe('backend_unavailable');
    const locked = Object.assign(new Error('table locked'), { code: 'SQLITE_LOCKED' });
    expect((translateSqliteError(locked) as { code?: string }).code).toBe('backend_unavailable');
    const constraint = Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' });
    expect(translateSqliteError(constraint)).toBe(constraint);
    const plain = new Error('anything else');
    expect(translateSqliteError(plain)).toBe(plain);
  });
});
