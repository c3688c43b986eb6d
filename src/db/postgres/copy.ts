/**
 * `artifact-store db copy --to postgres://…`: a SQLite data dir's metadata copied into an empty
 * Postgres, row for row with the same ids (references, artifacts, blobs, names and their counters,
 * direct uploads in flight, API keys, the audit trail, the outbox and retention runs), each table's
 * id counter set past what SQLite ever gave (so an event id a client resumes from is never given
 * again), then verified: every table read back from both, in key order, hashes the same.
 * Leases and the plans' scratch tables are not copied (nothing is in them between transactions).
 */
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { migratePostgres } from './connection.js';

/** Each copied table, its key (the copy's and the check's order), and its id counter if it has one. */
const TABLES: { name: string; key: string; serial?: string; booleans?: string[] }[] = [
  { name: 'blobs', key: 'sha256' },
  { name: 'artifacts', key: 'rowid', serial: 'rowid' },
  { name: 'artifact_refs', key: 'ref_id', serial: 'ref_id' },
  { name: 'names', key: 'id', serial: 'id' },
  { name: 'uploads', key: 'id' },
  { name: 'api_keys', key: 'id', booleans: ['operator'] },
  { name: 'audit_log', key: 'seq', serial: 'seq' },
  { name: 'outbox', key: 'seq', serial: 'seq' },
  { name: 'retention_runs', key: 'id', serial: 'id' },
  { name: 'blob_pins', key: 'id', serial: 'id' },
];

const BATCH = 500;

export interface CopyReport {
  /** Rows copied per table (all verified). */
  tables: { name: string; rows: number }[];
  /** The next event id on Postgres: after the last one SQLite gave. */
  nextEventSeq: number;
}

export class CopyRefusedError extends Error {
  override name = 'CopyRefusedError';
}

/** A row as both sides compare it: booleans as 0/1, everything else as read. */
const canonical = (row: Record<string, unknown>) =>
  JSON.stringify(Object.entries(row).map(([k, v]) => [k, typeof v === 'boolean' ? Number(v) : v]));

export async function copySqliteToPostgres(
  sqlitePath: string,
  url: string,
  onTable: (name: string, rows: number) => void = () => {},
): Promise<CopyReport> {
  const source = new Database(sqlitePath, { readonly: true, fileMustExist: true });
  const sql = postgres(url, {
    max: 2,
    onnotice: () => {},
    connect_timeout: 10,
    types: { bigint: { to: 20, from: [20], serialize: String, parse: Number } },
  });
  try {
    await migratePostgres(sql);
    for (const t of TABLES) {
      const [row] = await sql.unsafe(`SELECT EXISTS (SELECT 1 FROM ${t.name}) AS used`);
      if (row?.used)
        throw new CopyRefusedError(
          `The database is not empty (${t.name} has rows): db copy fills a new, empty database. Create one (CREATE DATABASE …) and copy into it.`,
        );
    }
    // One read transaction: every table comes from the same moment of the SQLite file.
    source.prepare('BEGIN').run();
    const counters = new Map(
      (source.prepare('SELECT name, seq FROM sqlite_sequence').all() as { name: string; seq: number }[]).map((r) => [
        r.name,
        r.seq,
      ]),
    );
    const tables: CopyReport['tables'] = [];
    await sql.begin(async (tx) => {
      for (const t of TABLES) {
        const select = t.name === 'artifacts' ? 'SELECT rowid, * FROM artifacts' : `SELECT * FROM ${t.name}`;
        let rows = 0;
        let batch: Record<string, unknown>[] = [];
        const flush = async () => {
          if (batch.length === 0) return;
          await tx`INSERT INTO ${tx(t.name)} ${tx(batch)}`;
          rows += batch.length;
          batch = [];
        };
        for (const raw of source.prepare(`${select} ORDER BY ${t.key}`).iterate() as Iterable<
          Record<string, unknown>
        >) {
          const row = { ...raw };
          for (const b of t.booleans ?? []) row[b] = Boolean(row[b]);
          batch.push(row);
          if (batch.length >= BATCH) await flush();
        }
        await flush();
        if (t.serial) {
          const [{ last }] = (await tx.unsafe(
            `SELECT coalesce(max(${t.serial}), 0) AS last FROM ${t.name}`,
          )) as unknown as [{ last: number }];
          const next = Math.max(last, counters.get(t.name) ?? 0);
          // The next id Postgres gives is one past the last SQLite gave (or 1).
          await tx.unsafe(`SELECT setval(pg_get_serial_sequence('${t.name}', '${t.serial}'), $1, $2)`, [
            Math.max(next, 1),
            next > 0,
          ]);
        }
        tables.push({ name: t.name, rows });
        onTable(t.name, rows);
      }
    });
    // Verified: each table, read back from both in key order, hashes the same.
    for (const t of TABLES) {
      const select = t.name === 'artifacts' ? 'SELECT rowid, * FROM artifacts' : `SELECT * FROM ${t.name}`;
      const mine = createHash('sha256');
      let n = 0;
      for (const row of source.prepare(`${select} ORDER BY ${t.key}`).iterate() as Iterable<Record<string, unknown>>) {
        mine.update(canonical(row));
        n++;
      }
      const theirs = createHash('sha256');
      let m = 0;
      const columns = Object.keys(
        (source.prepare(`${select} LIMIT 1`).get() as Record<string, unknown> | undefined) ?? {},
      );
      if (columns.length > 0) {
        const cursor = sql.unsafe(`SELECT ${columns.join(', ')} FROM ${t.name} ORDER BY ${t.key}`).cursor(BATCH);
        for await (const rows of cursor)
          for (const row of rows) {
            theirs.update(canonical(row));
            m++;
          }
      }
      if (n !== m || mine.digest('hex') !== theirs.digest('hex'))
        throw new Error(
          `The copy of ${t.name} does not match the SQLite file (${n} rows there, ${m} here): drop the database and copy again.`,
        );
    }
    source.prepare('COMMIT').run();
    const [{ next }] = (await sql.unsafe(
      `SELECT nextval(pg_get_serial_sequence('outbox', 'seq')) AS next`,
    )) as unknown as [{ next: number }];
    // That read took the number: put it back, so the first event takes it.
    await sql.unsafe(`SELECT setval(pg_get_serial_sequence('outbox', 'seq'), $1, false)`, [next]);
    return { tables, nextEventSeq: Number(next) };
  } finally {
    source.close();
    await sql.end({ timeout: 1 });
  }
}
