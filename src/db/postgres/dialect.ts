/**
 * The statement repository's SQL (written for SQLite and D1) in Postgres's words. The statements are
 * a fixed, known set, each tested on both databases (test/postgres-repository.test.ts runs the D1
 * differential's workloads here too), so a handful of textual rewrites suffice:
 *  - `@name` placeholders become `$n`, cast to the type their value has (Postgres must know each
 *    parameter's type, and cannot infer it in `@pinId IS NULL` or an INSERT … SELECT);
 *  - SQLite's functions become Postgres's: total() → coalesce(sum(), 0), json_object() →
 *    json_build_object(), json(x) → x::json, json_each() → json_array_elements_text(), the
 *    database clock;
 *  - camelCase column aliases are quoted (Postgres folds unquoted names to lower case);
 *  - CAST(… AS INTEGER) is a bigint (times are ms);
 *  - `COLLATE BINARY` (byte order) is `COLLATE "C"`.
 * Shared SQL is otherwise kept to what both accept (aliased derived tables, `names.next_version` in
 * an upsert, no sum() of a boolean).
 */
import { DATABASE_CLOCK } from '../plans/put.js';
import type { Params, Stmt } from '../plans/sql.js';

/** The database's time in ms, never earlier than @now: read when the statement runs (after its locks). */
const PG_CLOCK = 'greatest(@now, floor(extract(epoch from clock_timestamp()) * 1000)::bigint)';

/** Parameters whose null has a type other than text, and those that must be an int (substr's length). */
const PARAM_TYPES: Record<string, string> = {
  pinId: 'bigint',
  revokedAt: 'bigint',
  partSize: 'bigint',
  upTo: 'bigint',
  mimeLength: 'int',
};

function rewriteText(sql: string): string {
  return sql
    .replaceAll(DATABASE_CLOCK, PG_CLOCK)
    .replace(/\bjson_each\((@\w+)\)/g, 'json_array_elements_text($1::json)')
    .replace(/\bjson_object\(/g, 'json_build_object(')
    .replace(/\bjson\(([^()]+)\)/g, '($1)::json')
    .replace(/\btotal\(([^()]+)\)/g, 'coalesce(sum($1), 0)')
    .replace(/\bAS INTEGER\b/g, 'AS BIGINT')
    .replaceAll('COLLATE BINARY', 'COLLATE "C"')
    .replace(/\bAS ([a-z][a-z0-9]*[A-Z][A-Za-z0-9]*)\b/g, 'AS "$1"');
}

function typeOf(name: string, value: unknown): string {
  const declared = PARAM_TYPES[name];
  if (declared === 'int') return 'int';
  if (typeof value === 'number') return Number.isInteger(value) ? 'bigint' : 'float8';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'string') return 'text';
  return declared ?? 'text';
}

export interface PgStatement {
  text: string;
  values: unknown[];
}

/**
 * Per SQL text: the rewritten text cut at its placeholders (`parts`, one more than `slots`), which
 * parameter fills each slot, and the parameter names in order of first appearance ($1, $2…).
 */
const compiled = new Map<string, { parts: string[]; slots: number[]; names: string[]; typed: Map<string, string> }>();

function compile(sql: string) {
  let c = compiled.get(sql);
  if (!c) {
    const names: string[] = [];
    const slots: number[] = [];
    const parts = rewriteText(sql).split(/@([A-Za-z_][A-Za-z0-9_]*)/);
    // split() with a group alternates text and names: text, name, text, name, …, text.
    const texts = parts.filter((_, i) => i % 2 === 0);
    for (let i = 1; i < parts.length; i += 2) {
      const name = parts[i]!;
      let n = names.indexOf(name);
      if (n < 0) n = names.push(name) - 1;
      slots.push(n);
    }
    // The final text per combination of parameter types (a handful per statement).
    c = { parts: texts, slots, names, typed: new Map() };
    compiled.set(sql, c);
  }
  return c;
}

/** A statement of the shared SQL as Postgres runs it: text with typed `$n` placeholders, and their values. */
export function toPostgres({ sql, params }: Stmt): PgStatement {
  const c = compile(sql);
  const values: unknown[] = [];
  const types: string[] = [];
  for (const name of c.names) {
    if (!(name in params)) throw new Error(`No value for @${name}`);
    const value = (params as Params)[name];
    values.push(value === undefined ? null : value);
    types.push(typeOf(name, value));
  }
  const key = types.join(',');
  let text = c.typed.get(key);
  if (text === undefined) {
    text = c.parts[0]!;
    c.slots.forEach((n, i) => {
      text += `$${n + 1}::${types[n]}${c.parts[i + 1]}`;
    });
    c.typed.set(key, text);
  }
  return { text, values };
}
