/** The CLI's help texts: the overview and each ops command's --help. */
export const USAGE = `artifact-store — keep binary tool outputs out of LLM context

Usage:
  artifact-store serve [--host H] [--port N] [--data-dir DIR]
  artifact-store put <file|-> [--name N] [--type MIME] [--ttl 1h] [--session S] [-q]
  artifact-store get <id> [-o FILE]             (resumes an interrupted download to FILE)
  artifact-store ls [--session S] [--type PREFIX] [--limit N] [--json]
  artifact-store rm <id> [<id> …]
  artifact-store url <id> [--direct|--proxy] [--expires 1h] [--inline]
  artifact-store end-session [SESSION] [--json]   (removes everything the session holds)
  artifact-store token [--tenant T] [--session S] [--perms read,write] [--ttl 1h] [--ui]
  artifact-store keys create --tenant T [--perms read,write] [--label L] [--data-dir DIR]
  artifact-store keys create --operator [--label L] [--data-dir DIR]
  artifact-store keys ls [--tenant T] [--data-dir DIR]
  artifact-store keys revoke ID [--data-dir DIR]
  artifact-store retention run [--data-dir DIR] [--json]
  artifact-store usage [--tenant T] [--top N] [--data-dir DIR] [--json]
  artifact-store fsck [--verify] [--repair] [--data-dir DIR] [--json]
  artifact-store backup DIR|s3://bucket/prefix [--data-dir DIR]
  artifact-store restore DIR|s3://bucket/prefix [--data-dir DIR] [--force]
  artifact-store audit [--tenant T] [--action A] [--since 7d] [--limit N] [--data-dir DIR] [--json]
  artifact-store mcp [--url URL] [--session S]   (an MCP server on stdio; token from ARTIFACT_STORE_TOKEN)
  artifact-store gateway --config mcp.json [--embedded]   (the MCP gateway on stdio; see --help)

\`artifact-store <command> --help\` shows a command's options and examples. The client commands take
--url / --token, else ARTIFACT_STORE_URL / ARTIFACT_STORE_TOKEN, else a config file. Every setting of
the service is also an ARTIFACT_STORE_* environment variable (see docs/configuration.md).

Exit codes: 0 done; 1 failed (the message says what to do; fsck: problems remain); 2 bad usage;
3 no such artifact in your scope.`;

/** How long the sign-in link npm start prints stays good. */

const DATA_DIR_HELP = `  --data-dir DIR   the service's data folder (default ./data; or ARTIFACT_STORE_DATA_DIR). These commands
                   work on the service's database and blobs directly, on the same machine.`;

/** `artifact-store <ops command> --help`. */
export const OPS_HELP: Record<string, string> = {
  serve: `artifact-store serve [--host H] [--port N] [--data-dir DIR]

Runs the service (npm start runs this). Outside production it prints a dev token valid 30 days,
and a link that opens the artifact browser (/ui) signed in for 1 hour.
Every setting is an ARTIFACT_STORE_* variable (docs/configuration.md); flags win over them.

Examples:
  artifact-store serve --port 8787
  ARTIFACT_STORE_BLOB_DRIVER=s3 ARTIFACT_STORE_S3_BUCKET=artifacts artifact-store serve`,
  keys: `artifact-store keys create --tenant T [--perms read,write] [--label L]
artifact-store keys create --operator [--label L]
artifact-store keys ls [--tenant T]
artifact-store keys revoke ID

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
${DATA_DIR_HELP}

Examples:
  artifact-store restore /backups/artifact-store --data-dir ./data
  artifact-store restore s3://acme-backups/artifact-store --force`,
  mcp: `artifact-store mcp [--url URL] [--session S]

The artifact MCP server on stdio, as a client of a running service; its token comes from
ARTIFACT_STORE_TOKEN, the service from --url or ARTIFACT_STORE_URL (default http://127.0.0.1:8787).

Examples:
  ARTIFACT_STORE_TOKEN=… artifact-store mcp --url https://artifacts.example.com --session s-42`,
};
