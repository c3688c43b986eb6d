/**
 * The CLI's help texts, one per command: the command table. `artifact-store <command> --help` prints a
 * command's text; the overview (`artifact-store --help`) lists the first paragraph of each, so every
 * form a command's own help shows is in the overview too. main.ts dispatches on COMMAND_NAMES.
 */
import { PERMS } from '../core/perms.js';
import { CONNECTION_HELP } from './connection.js';
import { GATEWAY_HELP } from './gateway-command.js';

export const COMMAND_NAMES = [
  'serve',
  'put',
  'get',
  'ls',
  'rm',
  'url',
  'end-session',
  'token',
  'keys',
  'retention',
  'usage',
  'fsck',
  'backup',
  'restore',
  'db',
  'audit',
  'mcp',
  'gateway',
] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

const DATA_DIR_HELP = `  --data-dir DIR   the service's data folder. Default: ./data when it exists, else the data dir of the
                   service ARTIFACT_STORE_URL names if it runs here, else of the only artifact-store
                   serve running here (ARTIFACT_STORE_DATA_DIR sets it too). These commands work on
                   the service's database and blobs directly, on the same machine.`;

/** `artifact-store <command> --help`. */
export const HELP: Record<CommandName, string> = {
  put: `artifact-store put <file|-> [--name N] [--type MIME] [--ttl 1h] [--session S] [--resume] [-q]
artifact-store put <file|-> --to APP/NAME [--user-wide] [--session S] [-q]

Stores a file (or stdin, with -) and prints its ArtifactRef as JSON.
  --name NAME        filename to record (default: the file's name)
  --type MIME        media type (default: from the name's extension, else sniffed by the service)
  --namespace NS     e.g. the tool that produced it ("tableau.download_workbook")
  --ttl DURATION     how long to keep it: 3600, 30m, 1h, 7d, or never (where the service allows it)
  --session S        the session to store it in (tenant-wide tokens)
  --to APP/NAME      save it as the next version of a name (docs/http-api.md#named-versions)
  --user-wide        with --to: the user's name across sessions, not the session's
  --resume           keep a resume record: an interrupted upload of a big file resumes where it
                     stopped when the same file is put again with --resume (direct uploads in
                     parts; the record is in ~/.local/state/artifact-store/uploads.json, or
                     ARTIFACT_STORE_RESUME_FILE)
  --quiet, -q        print only the id (with --to: APP/NAME@VERSION)

${CONNECTION_HELP}

Examples:
  artifact-store put report.pdf
  artifact-store put report.pdf --to my-agent/report.pdf --session s-42
  curl -s https://example.com/chart.png | artifact-store put - --name chart.png --ttl 1d -q`,
  get: `artifact-store get <id> [-o FILE]
artifact-store get APP/NAME[@VERSION] [--session S] [--user-wide] [-o FILE]

Writes an artifact's bytes to stdout, or to FILE. APP/NAME reads a name's latest version and
APP/NAME@3 its version 3. A download to FILE goes to FILE.part first and is renamed once complete
and its sha256 checked; run the same command again after an interruption and it resumes where it
stopped (HTTP Range).
  --session S        the session whose names to read (tenant-wide tokens)
  --user-wide        APP/NAME is the user's name across sessions
  --output, -o FILE  where to write (default: stdout)

${CONNECTION_HELP}

Examples:
  artifact-store get art_3f1c0a… -o report.pdf
  artifact-store get art_3f1c0a… | jq .
  artifact-store get my-agent/report.pdf@2 -o report.pdf --session s-42`,
  ls: `artifact-store ls [--session S] [--namespace NS] [--type PREFIX] [--search TEXT] [--sort ORDER] [--limit N] [--json]

Lists artifacts in your scope, newest first, as a table (or JSON).
  --session S     only this session (tenant-wide tokens)
  --namespace NS  only this namespace
  --type PREFIX   only media types starting with this (image/, application/pdf)
  --search TEXT   only those whose id, filename or name holds TEXT (either case)
  --sort ORDER    newest (default), oldest, largest, smallest or name
  --limit N       at most N (default 50)
  --json          the ArtifactRefs as JSON

${CONNECTION_HELP}

Examples:
  artifact-store ls --session s-42
  artifact-store ls --type image/ --json | jq -r '.[].id'`,
  rm: `artifact-store rm <id> [<id> …]

Deletes artifacts from your scope (their bytes go once nothing else holds them). Exits 3 if one
was not there; the others are still deleted.

${CONNECTION_HELP}

Examples:
  artifact-store rm art_3f1c0a…
  artifact-store ls --session s-42 --json | jq -r '.[].id' | xargs artifact-store rm`,
  url: `artifact-store url <id> [--direct|--proxy] [--expires 15m] [--inline]

Prints a download link a browser can open without a token.
  --proxy            through the service (the default)
  --direct           straight from S3 / R2 / the CDN (falls back to proxy where the blob store cannot presign)
  --expires DURATION how long the link works: 900, 15m, 1h (default 15m; never past the artifact's expiry)
  --inline           open in the browser rather than download

${CONNECTION_HELP}

Examples:
  artifact-store url art_3f1c0a… --expires 1h
  open "$(artifact-store url art_3f1c0a… --inline)"`,
  'end-session': `artifact-store end-session [SESSION] [--json]

Ends a session: everything it holds goes at once (its references and its named versions, with
their names; user-wide names stay), and prints what went. SESSION defaults to --session or
ARTIFACT_STORE_SESSION. A session that holds nothing (any more) is not an error.
  --session S    the session, when not given as SESSION
  --json         what went as JSON: {"sessionId", "refs", "bytes", "versions"}

${CONNECTION_HELP}

Examples:
  artifact-store end-session s-42
  ARTIFACT_STORE_SESSION=s-42 artifact-store end-session --json | jq .bytes`,
  token: `artifact-store token [--tenant T] [--sub S] [--session S] [--perms read,write] [--ttl 1h] [--data-dir DIR]
artifact-store token --ui [--session S] [--perms read] [--ttl 1h] [--data-dir DIR] [--url URL]

Mints a token with the configured signing secret: the first of ARTIFACT_STORE_JWT_SECRETS, or the dev
secret npm start keeps in the data dir. For development and scripts; production tokens come from your
own auth. Prints only the token (or the link) on stdout; a refusal prints nothing there and exits 2.
  --tenant T       tenant (default dev)
  --sub S          user id (default dev); the token is bound to it. --sub '' binds none: the
                   token then names users per request (X-Artifact-User), as the ADK adapter does
  --session S      bind the token to one session (it sees only that session)
  --trace T        bind it to one trace
  --perms LIST     comma separated: ${PERMS.join(', ')} (default read,write)
  --ttl DURATION   lifetime: 3600, 15m, 12h, 30d (default 1h)
  --data-dir DIR   where the dev secret lives. Default: ./data when it exists, else the data dir of
                   the service --url / ARTIFACT_STORE_URL names if it runs here, else of the only
                   artifact-store serve running here; never made here
  --ui             print a link that opens the artifact browser signed in with the token
  --url URL        the service the --ui link points at (default: ARTIFACT_STORE_URL, the config
                   file, else the service whose data dir minted the token, else http://127.0.0.1:8787)
  --config FILE    the config file to read "url" from (default ~/.config/artifact-store/config.json)

Examples:
  ARTIFACT_STORE_TOKEN=$(artifact-store token --perms read,write,admin --ttl 12h) && export ARTIFACT_STORE_TOKEN
  artifact-store token --tenant acme --session s-42 --perms read
  artifact-store token --ui --session s-42 --perms read --ttl 8h`,
  serve: `artifact-store serve [--host H] [--port N] [--data-dir DIR]

Runs the service (npm start runs this). Outside production it prints a dev token valid 30 days,
and a link that opens the artifact browser (/ui) signed in for 1 hour.
Every setting is an ARTIFACT_STORE_* variable (docs/configuration.md); flags win over them.

Examples:
  artifact-store serve --port 8787
  ARTIFACT_STORE_BLOB_DRIVER=s3 ARTIFACT_STORE_S3_BUCKET=artifacts artifact-store serve`,
  keys: `artifact-store keys create --tenant T [--perms read,write] [--label L] [--data-dir DIR]
artifact-store keys create --operator [--label L] [--data-dir DIR]
artifact-store keys ls [--tenant T] [--data-dir DIR]
artifact-store keys revoke ID [--data-dir DIR]

API keys (sent as Bearer tokens). A new key is printed once. revoke exits 1 when there was no such
active key. Creating and revoking keys is recorded in the audit trail.
  --operator       an operator key: every tenant's usage and events, retention runs, fsck and the
                   audit trail over HTTP; no tenant, no artifacts. Only this command makes one: no
                   token signed with the host app's keys can become an operator.
${DATA_DIR_HELP}

Examples:
  artifact-store keys create --tenant acme --perms read,write --label ci
  artifact-store keys create --operator --label oncall
  artifact-store keys revoke key_3f1c…`,
  audit: `artifact-store audit [--tenant T] [--action A] [--since 7d] [--limit N] [--json] [--data-dir DIR]

The audit trail, newest first: purges, retention and fsck runs, keys created and revoked, policy
changes; who (role:kind:id), when, on which tenant, and the request id. Kept for
ARTIFACT_STORE_AUDIT_RETENTION_DAYS (90).
  --tenant T       one tenant's entries ('' is not a tenant: service-wide entries show as (service))
  --action A       one action (artifact.purge, retention.run, fsck.run, key.create, key.revoke, policy.change)
  --since 7d       newer than a duration (30m, 12h, 7d) or an ISO date
  --limit N        how many (default 50)
  --json           one JSON object a line
${DATA_DIR_HELP}

Examples:
  artifact-store audit --since 1d
  artifact-store audit --tenant acme --action artifact.purge --json`,
  retention: `artifact-store retention run [--json] [--data-dir DIR]

One retention run: expire references, enforce lowered limits, reap unfinished uploads, collect
unreferenced blobs, sweep staging, trim old events. Safe while the service runs.
  --json           the report as JSON
${DATA_DIR_HELP}

Examples:
  artifact-store retention run
  artifact-store retention run --json | jq .blobs`,
  usage: `artifact-store usage [--tenant T] [--top N] [--json] [--data-dir DIR]

Live usage per tenant, and the top sessions and traces against their limits.
  --tenant T       one tenant
  --top N          how many sessions and traces (default 20)
  --json           the report as JSON
${DATA_DIR_HELP}

Examples:
  artifact-store usage --tenant acme --top 5`,
  fsck: `artifact-store fsck [--verify] [--repair] [--json] [--data-dir DIR]

Checks that metadata and stored bytes agree. Exits 1 while problems remain.
  --verify         also re-hash every blob (reads all bytes)
  --repair         remove orphan bytes and rows nothing holds (older than the GC grace period)
  --json           the report as JSON
${DATA_DIR_HELP}

Examples:
  artifact-store fsck --verify
  artifact-store fsck --repair`,
  backup: `artifact-store backup DIR|s3://bucket/prefix [--data-dir DIR]

A consistent backup while the service runs, into a folder or an S3 bucket and prefix: SQLite's
online backup, a manifest of the blobs it records, and on the fs driver the blob files, copied
incrementally (only those the target lacks). On the s3 driver the bucket holds the blobs (keep
versioning on). backup.json is written last: a backup cut short is never taken for a complete one.
The target is proven writable first: if it is not, nothing is touched. s3:// targets use the S3
driver's connection settings (ARTIFACT_STORE_S3_ENDPOINT, _REGION, _ACCESS_KEY_ID,
_SECRET_ACCESS_KEY, _FORCE_PATH_STYLE). Exits 1 if recorded blobs are missing (run fsck).
${DATA_DIR_HELP}

Examples:
  artifact-store backup /backups/artifact-store
  artifact-store backup s3://acme-backups/artifact-store`,
  restore: `artifact-store restore DIR|s3://bucket/prefix [--data-dir DIR] [--force]

Brings a data dir back from a backup (stop the service first): the database, checked against the
backup's sha256; the blobs its manifest names, each verified while copied (fs driver) or looked up
in the bucket (s3 driver, whose backups hold the database only); then what the restored database
no longer references (blobs stored after the backup) is removed, so fsck is clean. Exits 1 when
blobs are missing, naming them and what to do.
  --force          replace the database the data dir already holds (refused without it)
  --data-dir DIR   the data dir to restore into (default ./data; or ARTIFACT_STORE_DATA_DIR)

Examples:
  artifact-store restore /backups/artifact-store --data-dir ./data
  artifact-store restore s3://acme-backups/artifact-store --force`,
  db: `artifact-store db migrate [--data-dir DIR]
artifact-store db copy --to postgres://… [--data-dir DIR]

Brings the metadata database's schema up to this release: Postgres at ARTIFACT_STORE_DATABASE_URL
(run it before rolling out a release, so replicas start on a migrated schema; each replica also
migrates at start, one at a time, under a lock in the database), else the data dir's SQLite file.
Refuses a database migrated by a newer release. Prints how many migrations it applied.

db copy moves a data dir's SQLite metadata into an empty Postgres (stop the service first): every
row with its id, the event ids going on where they stopped, then every table read back and checked.
The bytes stay where they are (docs/deploy.md#moving-to-postgres).
  --to URL         the Postgres to copy into (an empty database)
  --data-dir DIR   the data dir whose SQLite file to migrate or copy (without ARTIFACT_STORE_DATABASE_URL)

Examples:
  ARTIFACT_STORE_DATABASE_URL=postgres://artifacts:…@db.internal:5432/artifacts artifact-store db migrate
  artifact-store db copy --to postgres://artifacts:…@db.internal:5432/artifacts --data-dir ./data`,
  mcp: `artifact-store mcp [--url URL] [--session S]

The artifact MCP server on stdio, as a client of a running service; its token comes from
ARTIFACT_STORE_TOKEN, the service from --url or ARTIFACT_STORE_URL (default: the service running on
./data, else the only one running on this host, else http://127.0.0.1:8787).

Examples:
  ARTIFACT_STORE_TOKEN=… artifact-store mcp --url https://artifacts.example.com --session s-42`,
  gateway: GATEWAY_HELP,
};

/** A command's forms: the lines of the first paragraph of its help. */
export function formsOf(help: string): string[] {
  return help.split('\n\n')[0]!.split('\n');
}

export const USAGE = `artifact-store — keep binary tool outputs out of LLM context

Usage:
${COMMAND_NAMES.flatMap((name) => formsOf(HELP[name]))
  .map((form) => `  ${form}`)
  .join('\n')}
  artifact-store --version
  artifact-store --help

\`artifact-store <command> --help\` shows a command's options and examples. The client commands take
--url / --token, else ARTIFACT_STORE_URL / ARTIFACT_STORE_TOKEN, else a config file. Every setting of
the service is also an ARTIFACT_STORE_* environment variable (see docs/configuration.md).

Exit codes: 0 done; 1 failed (the message says what to do; fsck: problems remain); 2 bad usage;
3 no such artifact in your scope.`;

/** The closest of `names` to `typed` (edit distance, a swap of neighbours counting one), if close enough to be a typo. */
export function closest(typed: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of names) {
    const d = editDistance(typed.toLowerCase(), name);
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  // One edit for short names (ls, rm), two for longer ones; never more than half the word.
  const allowed = Math.min(typed.length <= 4 ? 1 : 2, Math.floor(typed.length / 2));
  return bestDistance <= allowed ? best : undefined;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  return d[a.length]![b.length]!;
}
