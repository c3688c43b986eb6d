/**
 * What the CLI's commands share: how a command is declared and run, where the service and token
 * come from, durations, and turning errors into one line with an exit code.
 *
 * Settings come from flags, then the environment (ARTIFACT_STORE_URL, ARTIFACT_STORE_TOKEN,
 * ARTIFACT_STORE_SESSION), then a config file (--config, ARTIFACT_STORE_CONFIG, or
 * ~/.config/artifact-store/config.json: {"url", "token", "session"}), in that precedence. With no URL
 * set anywhere, the service is the one services.ts picks on this host.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { isArtifactError } from '../core/errors.js';
import { CliError, EXIT } from './cli-error.js';
import { chooseUrl, type NamedUrl } from './services.js';

export interface Command {
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<void>;
}

export const CONNECTION = {
  url: { type: 'string' },
  token: { type: 'string' },
  config: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const CONNECTION_HELP = `Connection (flags, then ARTIFACT_STORE_URL / _TOKEN / _SESSION, then the config file):
  --url URL        the service (default: the one running on ./data, else the only one running
                   on this host, else http://127.0.0.1:8787)
  --token T        a bearer token (npm start prints a dev one; \`artifact-store token\` mints one)
  --config FILE    JSON {"url", "token", "session"} (default ~/.config/artifact-store/config.json)`;

export interface Connection {
  url: string;
  token: string;
  session?: string;
}

export function readConfigFile(path: string | undefined): Partial<Connection> {
  const file = path ?? process.env.ARTIFACT_STORE_CONFIG ?? join(homedir(), '.config', 'artifact-store', 'config.json');
  if (!existsSync(file)) {
    if (path ?? process.env.ARTIFACT_STORE_CONFIG)
      throw new CliError(`Config file ${file} does not exist.`, EXIT.usage);
    return {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new CliError(`Config file ${file} is not valid JSON (${(err as Error).message}).`, EXIT.usage);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new CliError(`Config file ${file} must hold a JSON object like {"url": "…", "token": "…"}.`, EXIT.usage);
  const out: Partial<Connection> = {};
  for (const key of ['url', 'token', 'session'] as const) {
    const v = (parsed as Record<string, unknown>)[key];
    if (v === undefined) continue;
    if (typeof v !== 'string') throw new CliError(`Config file ${file}: "${key}" must be a string.`, EXIT.usage);
    out[key] = v;
  }
  return out;
}

/** The URL the user set: --url, else ARTIFACT_STORE_URL, else the config file's "url"; undefined if none. */
export function namedUrl(values: Record<string, string | boolean | undefined>): NamedUrl | undefined {
  if (typeof values.url === 'string') return { url: values.url, from: '--url' };
  if (process.env.ARTIFACT_STORE_URL) return { url: process.env.ARTIFACT_STORE_URL, from: 'ARTIFACT_STORE_URL' };
  const file = readConfigFile(values.config as string | undefined);
  return file.url ? { url: file.url, from: 'the config file' } : undefined;
}

export function connection(values: Record<string, string | boolean | undefined>): Connection {
  const file = readConfigFile(values.config as string | undefined);
  const env = process.env;
  const token = (values.token as string | undefined) ?? env.ARTIFACT_STORE_TOKEN ?? file.token;
  if (!token)
    throw new CliError(
      'No token: pass --token, set ARTIFACT_STORE_TOKEN, or put "token" in the config file (npm start prints a dev token; `artifact-store token` mints one).',
      EXIT.usage,
    );
  const url = namedUrl(values)?.url ?? chooseUrl();
  const session = (values.session as string | undefined) ?? env.ARTIFACT_STORE_SESSION ?? file.session;
  return { url, token, ...(session ? { session } : {}) };
}

/** "90", "30s", "15m", "1h", "2d" → seconds. */
export function parseDuration(text: string, what: string): number {
  const m = /^(\d{1,9})([smhd]?)$/.exec(text.trim());
  if (!m || Number(m[1]) === 0)
    throw new CliError(
      `${what} ${JSON.stringify(text)} is not a duration: use e.g. 90, 30s, 15m, 1h or 2d.`,
      EXIT.usage,
    );
  return Number(m[1]) * { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[m[2] as '' | 's' | 'm' | 'h' | 'd'];
}

/** Turns the SDK's errors into one line with the right exit code. */
export function cliErrorOf(err: unknown): CliError {
  if (err instanceof CliError) return err;
  if (isArtifactError(err))
    return new CliError(`${err.message} (${err.code})`, err.code === 'not_found' ? EXIT.notFound : EXIT.failed);
  const e = err as NodeJS.ErrnoException & { cause?: { code?: string } };
  const code = e?.code ?? e?.cause?.code;
  if (
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'ECONNRESET' ||
    /fetch failed/.test(e?.message ?? '')
  ) {
    return new CliError(
      `Cannot reach the service (${code ?? e.message}): is it running, and is --url / ARTIFACT_STORE_URL right?`,
    );
  }
  if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') return new CliError(e.message);
  return new CliError(e instanceof Error ? e.message : String(err));
}

/** Parses a command's flags, prints its help or runs it; throws CliError (one line, exit code) on failure. */
export async function runCommand(command: Command, name: string, argv: string[]): Promise<void> {
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
