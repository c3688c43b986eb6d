/**
 * The whole store in-process, in one call: `openArtifactStore()` opens a data dir as
 * `artifact-store serve` does (the same configuration, drivers, limits, tenant policies, view sandbox
 * and retention schedule), with no HTTP listener, and gives an ArtifactStore for one scope. With
 * `memory: true` the same service runs over SQLite in memory and the memory blob store: nothing
 * touches the disk and everything goes with close() (or the process).
 */
import { enableLinearRegExps } from './regexps.js';
import { createNodeViewSandbox } from './view-sandbox.js';
import { composeService } from '../compose/compose-app.js';
import { createRetentionRunner, retentionDepsOf } from '../compose/retention.js';
import { policySettings } from '../compose/settings.js';
import type { ArtifactStore } from '../core/artifact-store.js';
import { type Config, loadConfig } from '../core/config.js';
import type { ArtifactScope } from '../core/schemas.js';
import { narrowScope } from '../core/scope.js';
import { createJsonLogger } from '../core/logger.js';
import { recordPolicyChange } from '../service/audit.js';
import { createEmbeddedArtifactStore } from '../service/embedded-store.js';
import type { SessionEndReport } from '../core/sessions.js';
import { openNodeDrivers } from './drivers.js';
import { scheduleRetention } from './retention-schedule.js';

/** The tenant of a store opened without one: the tenant of `serve`'s dev token and /ui sign-in. */
const DEFAULT_EMBEDDED_TENANT = 'dev';

export interface OpenArtifactStoreOptions {
  /** Where the SQLite file and the blobs are: default ARTIFACT_STORE_DATA_DIR, else ./data (as `serve`). */
  dataDir?: string;
  /**
   * Keep the metadata (SQLite) and the bytes (the memory blob driver) in this process's memory, not
   * in a data dir: the same service and rules, nothing written to disk, and `capabilities.persistent`
   * false. Not with `dataDir`.
   */
  memory?: boolean;
  /**
   * Who the store acts for: puts land in this scope, reads see the tenant narrowed to its session /
   * trace. The tenant defaults to "dev" (what `serve`'s dev token and /ui see on the same data dir).
   */
  scope?: Partial<ArtifactScope>;
  /** The ARTIFACT_STORE_* settings to read (docs/configuration.md); default process.env, as `serve`. */
  env?: Record<string, string | undefined>;
}

/** An ArtifactStore over an open data dir, plus stores for other scopes over the same one. */
export interface EmbeddedArtifactStore extends ArtifactStore {
  readonly scope: ArtifactScope;
  /** Another store over the same data dir (or memory), acting for `scope` (another tenant, user, session or trace). */
  withScope(scope: ArtifactScope): EmbeddedArtifactStore;
  endSession(sessionId?: string): Promise<SessionEndReport>;
  /**
   * Closes the data dir for this store and every store withScope made from it: the retention timer,
   * the view sandbox's worker thread, the SQLite connection (in memory: and everything stored).
   * Calls after it reject; a second close() does nothing.
   */
  close(): Promise<void>;
}

/**
 * Opens a data dir in this process, as `artifact-store serve` would but with no HTTP listener. A
 * service running on the same data dir at the same time is fine (SQLite in WAL mode; retention runs
 * in one of them at a time). With `memory: true`, the same service over memory alone: the server's
 * rules (quotas, views, version counters, session ends) for tests and throwaway processes.
 *
 * @example
 * const store = await openArtifactStore({ scope: { sessionId: 's-42' } });
 * const ref = await store.putText('hello', { filename: 'hello.txt' });
 * await store.close();
 *
 * @example
 * const scratch = await openArtifactStore({ memory: true, scope: { tenantId: 'acme' } });
 */
export async function openArtifactStore(options: OpenArtifactStoreOptions = {}): Promise<EmbeddedArtifactStore> {
  if (options.memory && options.dataDir !== undefined)
    throw new TypeError(
      'openArtifactStore: `memory: true` keeps nothing on disk, so it takes no `dataDir`: pass one or the other.',
    );
  const config = loadConfig(options.env ?? process.env, {
    ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
    // The memory blob driver brings SQLite in memory with it (openNodeDrivers).
    ...(options.memory ? { blobDriver: 'memory' as const } : {}),
  });
  const { tenantId = DEFAULT_EMBEDDED_TENANT, ...parts } = options.scope ?? {};
  const scope = narrowScope({ tenantId }, parts);
  const persistent = config.blobDriver !== 'memory';
  const closedMessage = persistent
    ? 'This artifact store is closed (close() was called): open the data dir again with openArtifactStore().'
    : 'This artifact store is closed (close() was called), and what it held in memory went with it: ' +
      'open a new one with openArtifactStore({ memory: true }).';
  const opened = await openService(config);
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= opened.close());
  const isClosed = () => closing !== undefined;
  const scoped = (s: ArtifactScope): EmbeddedArtifactStore => {
    const store = refuseWhenClosed(
      createEmbeddedArtifactStore({ service: opened.service, scope: s, persistent }),
      isClosed,
      closedMessage,
    );
    return {
      ...store,
      endSession: store.endSession!,
      scope: s,
      withScope: (other) => scoped(narrowScope({ tenantId: other.tenantId }, other)),
      close,
    };
  };
  return scoped(scope);
}

/** The service over the configured drivers, composed as composeApp composes serve's, and what closes it. */
async function openService(config: Config) {
  enableLinearRegExps();
  const drivers = await openNodeDrivers(config);
  const viewSandbox = createNodeViewSandbox();
  const settings = policySettings(config);
  // What the service and retention work around is logged (warnings and errors unless the level is
  // debug) to stderr, never into the host's stdout.
  const logger = createJsonLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, (line) =>
    process.stderr.write(`${line}\n`),
  );
  const service = composeService(config, drivers, { policies: settings.policies, viewSandbox, logger });
  const closeAll = async () => {
    await service.close();
    await viewSandbox.close();
    await drivers.close();
  };
  try {
    // Policies come from configuration: an open with other ones than last time is a policy change.
    await recordPolicyChange(
      drivers.repo,
      { role: 'host', actorKind: 'config', actorId: `pid ${process.pid}` },
      { base: settings.base, tenants: settings.tenantPolicies },
    );
  } catch (err) {
    await closeAll();
    throw err;
  }
  const run = createRetentionRunner(
    retentionDepsOf(config, settings, drivers, {
      pause: 1,
      batchTargetMs: 25,
      busy: () => service.putsInFlight() > 0,
      logger,
    }),
  );
  const schedule = scheduleRetention({
    repo: drivers.repo,
    intervalSeconds: config.retentionIntervalSeconds,
    run,
    logger,
  });
  return {
    service,
    close: async () => {
      await schedule.stop();
      await closeAll();
    },
  };
}

/** The store's methods (and its names' methods), each rejecting with `message` once closed. */
function refuseWhenClosed<T extends object>(target: T, isClosed: () => boolean, message: string): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(target)) {
    if (typeof value === 'function') {
      out[key] = (...args: unknown[]) =>
        isClosed() ? Promise.reject(new Error(message)) : (value as (...a: unknown[]) => unknown).apply(target, args);
    } else if (key === 'names' && value && typeof value === 'object') {
      out[key] = refuseWhenClosed(value, isClosed, message);
    } else out[key] = value;
  }
  return out as T;
}
