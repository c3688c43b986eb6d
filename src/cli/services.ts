/**
 * Which service a command means when no flag says, in one place for every command.
 *
 * `serve` records itself in {XDG_STATE_HOME or ~/.local/state}/artifact-store/running/{pid}.json while
 * it runs (its URL and data dir); a record whose process is gone is ignored and removed.
 *
 * The commands that work on a data dir on this host (`token`, `keys`, `usage`, `fsck`, …) take it from
 * --data-dir or ARTIFACT_STORE_DATA_DIR; else, here:
 *   (a) ./data of the current folder, when it exists (a service running on it or not);
 *   (b) the running service that ARTIFACT_STORE_URL (or the config file's "url") names;
 *   (c) the only service running on this host.
 * The commands that talk to a service (`put`, `ls`, `mcp`, …) take its URL from --url,
 * ARTIFACT_STORE_URL or the config file; else the service running on ./data, else the only one
 * running, else http://127.0.0.1:8787.
 * Only a real ambiguity refuses: several services and nothing that picks one, or ./data and the URL
 * naming two different ones. The refusal lists each service with the flag that picks it.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { CliError, EXIT } from './cli-error.js';

/** What a running `serve` records about itself. */
export interface ServeRecord {
  pid: number;
  url: string;
  dataDir: string;
  dbPath: string;
  startedAt: string;
}

export const DEFAULT_URL = 'http://127.0.0.1:8787';

export function runningDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'artifact-store', 'running');
}

/** Records this `serve` until `forget` is called (or the process is gone). Never fails the start. */
export function recordServe(record: Omit<ServeRecord, 'pid' | 'startedAt'>): () => void {
  const file = join(runningDir(), `${process.pid}.json`);
  try {
    mkdirSync(runningDir(), { recursive: true });
    writeFileSync(
      file,
      `${JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString(), ...record } satisfies ServeRecord)}\n`,
    );
  } catch {
    return () => {}; // a read-only home: the commands then need --data-dir
  }
  const forget = () => rmSync(file, { force: true });
  process.once('exit', forget);
  return forget;
}

/** The records of `serve` processes still running here; stale ones are removed. */
export function runningServes(env: NodeJS.ProcessEnv = process.env): ServeRecord[] {
  const dir = runningDir(env);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^\d+\.json$/.test(n));
  } catch {
    return [];
  }
  const live: ServeRecord[] = [];
  for (const name of names) {
    const file = join(dir, name);
    try {
      const record = JSON.parse(readFileSync(file, 'utf8')) as ServeRecord;
      if (isServing(record.pid)) live.push(record);
      else rmSync(file, { force: true });
    } catch {
      // Half-written by a start in progress, or removed meanwhile.
    }
  }
  return live.sort((a, b) => a.pid - b.pid);
}

/** True while `pid` runs, and (where /proc tells) is still a `serve`, not a recycled pid. */
function isServing(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('serve');
  } catch {
    return true; // no /proc: the pid check is all there is
  }
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '0.0.0.0', '[::]']);

/** Whether two URLs name the same service: same port, and the same host or both this host. */
export function sameService(a: string, b: string): boolean {
  let x: URL;
  let y: URL;
  try {
    x = new URL(a);
    y = new URL(b);
  } catch {
    return false;
  }
  const port = (u: URL) => u.port || (u.protocol === 'https:' ? '443' : '80');
  if (x.protocol !== y.protocol || port(x) !== port(y)) return false;
  return x.hostname === y.hostname || (LOCAL_HOSTS.has(x.hostname) && LOCAL_HOSTS.has(y.hostname));
}

/** A URL the user named (ARTIFACT_STORE_URL, the config file, a --url flag) and where it came from. */
export interface NamedUrl {
  url: string;
  /** "ARTIFACT_STORE_URL", "the config file", "--url". */
  from: string;
}

/** The data dir a command on this host works on, found by (a), (b), (c). */
export interface DataDirChoice {
  dataDir: string;
  /** The service running on it, if one does. */
  serve?: ServeRecord;
  /** For messages: "./data", "the service running as pid 12 (http://…)". */
  from: string;
}

const withUrl = (s: ServeRecord) => `${s.url}, pid ${s.pid}`;

/**
 * The data dir of (a), (b), (c) above, or undefined when there is none to use. `namedUrl` gives the
 * URL the user set, if any; `explicit` when it came from a flag, which wins over ./data. Throws a CliError (exit 2)
 * listing the choices, each with its --data-dir, when they are ambiguous. Says on stderr which
 * service it took when that was not ./data.
 */
export function chooseDataDir(
  namedUrl: () => (NamedUrl & { explicit?: boolean }) | undefined,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): DataDirChoice | undefined {
  const local = resolve(cwd, 'data');
  const serves = runningServes(env);
  // The URL matters only to pick among running services: with none, the config file is not read.
  const named = serves.length > 0 ? namedUrl() : undefined;
  const onLocal = serves.find((s) => s.dataDir === local);
  const namedServe = named ? serves.find((s) => sameService(s.url, named.url)) : undefined;
  const note = (choice: DataDirChoice) => {
    process.stderr.write(`artifact-store: using the data dir of ${choice.from}: ${choice.dataDir}\n`);
    return choice;
  };
  const byUrl = (s: ServeRecord, n: NamedUrl) =>
    note({ dataDir: s.dataDir, serve: s, from: `the service ${n.from} names (pid ${s.pid}, ${s.url})` });
  if (named?.explicit && namedServe) return byUrl(namedServe, named);
  if (existsSync(local)) {
    if (named && namedServe && namedServe.dataDir !== local)
      throw ambiguous(
        `./data here (${local}) and ${named.from} (${named.url}, the service on ${namedServe.dataDir}) are different services`,
        [
          [local, onLocal ? `./data here: ${withUrl(onLocal)}` : './data here: no service running on it'],
          [namedServe.dataDir, `${named.from}: ${withUrl(namedServe)}`],
        ],
        '--data-dir',
      );
    return { dataDir: local, ...(onLocal ? { serve: onLocal } : {}), from: './data' };
  }
  if (named && namedServe) return byUrl(namedServe, named);
  const dirs = [...new Map(serves.map((s) => [s.dataDir, s])).values()];
  if (dirs.length > 1)
    throw ambiguous(
      `Several services run on this host, and nothing here picks one (no ./data in ${cwd}; ${
        named ? `${named.from} ${named.url} names none of them` : 'ARTIFACT_STORE_URL is not set'
      })`,
      dirs.map((s) => [s.dataDir, withUrl(s)]),
      '--data-dir',
    );
  const only = dirs[0];
  if (!only) return undefined;
  if (named)
    process.stderr.write(
      `artifact-store: ${named.from} ${named.url} is no service running on this host (is it another machine's?).\n`,
    );
  return note({ dataDir: only.dataDir, serve: only, from: `the service running as pid ${only.pid} (${only.url})` });
}

/**
 * The URL of the service a client command talks to when none is set: the one running on ./data, else
 * the only one running, else the default. Refuses, listing each with its --url, when several run and
 * none is on ./data.
 */
export function chooseUrl(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string {
  const serves = runningServes(env);
  const onLocal = serves.find((s) => s.dataDir === resolve(cwd, 'data'));
  if (onLocal) return onLocal.url;
  const urls = [...new Map(serves.map((s) => [s.url, s])).values()];
  if (urls.length > 1)
    throw ambiguous(
      `Several services run on this host, and nothing here picks one (no --url, ARTIFACT_STORE_URL or config file "url"; no service on ./data in ${cwd})`,
      urls.map((s) => [s.url, `data dir ${s.dataDir}, pid ${s.pid}`]),
      '--url',
    );
  const only = urls[0];
  if (!only) return DEFAULT_URL;
  process.stderr.write(`artifact-store: using the service running as pid ${only.pid}: ${only.url}\n`);
  return only.url;
}

function ambiguous(why: string, choices: [string, string][], flag: '--data-dir' | '--url'): CliError {
  const width = Math.max(...choices.map(([value]) => value.length));
  const how =
    flag === '--data-dir'
      ? 'or run it in the folder that holds its data/, or set ARTIFACT_STORE_URL to its URL'
      : 'or set ARTIFACT_STORE_URL';
  return new CliError(
    `${why}. Pass the one you mean:\n${choices.map(([value, what]) => `  ${flag} ${value.padEnd(width)}  (${what})`).join('\n')}\n${how}.`,
    EXIT.usage,
  );
}
