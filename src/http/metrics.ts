import { performance } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import type { ServiceObserver } from '../service/artifact-service.js';
import type { ServiceOperations } from '../service/operations.js';
import type { RetentionReport } from '../service/retention/index.js';

/**
 * Prometheus metrics of one service process (prom-client). No label carries a tenant, session or
 * artifact id: routes are their patterns (`/v1/artifacts/:id`), so cardinality stays fixed.
 */
export function createMetrics(ops: Pick<ServiceOperations, 'storedTotals'> | undefined) {
  const registry = new Registry();
  const registers = [registry];
  // Process basics, read on scrape. (prom-client's default metrics watch every GC through a
  // PerformanceObserver, which cost a tenth of a small GET under load.)
  const processGauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read());
      },
    });
  processGauge(
    'artifact_store_process_cpu_user_seconds_total',
    'User CPU time of the process.',
    () => process.cpuUsage().user / 1e6,
  );
  processGauge(
    'artifact_store_process_cpu_system_seconds_total',
    'System CPU time of the process.',
    () => process.cpuUsage().system / 1e6,
  );
  processGauge('artifact_store_process_resident_memory_bytes', 'Resident memory of the process.', () =>
    process.memoryUsage.rss(),
  );
  processGauge('artifact_store_nodejs_heap_used_bytes', 'V8 heap in use.', () => process.memoryUsage().heapUsed);
  let elu = performance.eventLoopUtilization();
  processGauge(
    'artifact_store_event_loop_utilization',
    'Share of time the event loop was busy since the previous scrape (0 to 1).',
    () => {
      const now = performance.eventLoopUtilization();
      const delta = performance.eventLoopUtilization(now, elu);
      elu = now;
      return delta.utilization;
    },
  );
  // Per request: plain numbers in a map, turned into samples only when scraped. prom-client's own
  // labelled counters and histograms hash their labels on every call, which cost a tenth of a small GET.
  const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];
  const byRoute = new Map<
    string,
    { method: string; route: string; counts: Map<number, number>; buckets: number[]; sum: number; count: number }
  >();
  registry.registerMetric(
    scraped('artifact_store_http_requests_total', 'HTTP requests by method, route pattern and status.', 'counter', () =>
      [...byRoute.values()].flatMap((r) =>
        [...r.counts].map(([status, value]) => ({ labels: { method: r.method, route: r.route, status }, value })),
      ),
    ),
  );
  registry.registerMetric(
    scraped(
      'artifact_store_http_request_duration_seconds',
      'Time to the response head (streamed bodies continue after it), by method and route pattern.',
      'histogram',
      () =>
        [...byRoute.values()].flatMap((r) => {
          const labels = { method: r.method, route: r.route };
          let cumulative = 0;
          return [
            ...BUCKETS.map((le, i) => {
              cumulative += r.buckets[i]!;
              return {
                metricName: 'artifact_store_http_request_duration_seconds_bucket',
                labels: { ...labels, le },
                value: cumulative,
              };
            }),
            {
              metricName: 'artifact_store_http_request_duration_seconds_bucket',
              labels: { ...labels, le: '+Inf' },
              value: r.count,
            },
            { metricName: 'artifact_store_http_request_duration_seconds_sum', labels, value: r.sum },
            { metricName: 'artifact_store_http_request_duration_seconds_count', labels, value: r.count },
          ];
        }),
    ),
  );
  const bytesIn = new Counter({
    name: 'artifact_store_bytes_in_total',
    help: 'Bytes of artifacts stored (puts and completed direct uploads).',
    registers,
  });
  const bytesOut = new Counter({
    name: 'artifact_store_bytes_out_total',
    help: 'Bytes of artifacts served through the service.',
    registers,
  });
  const evictions = new Counter({
    name: 'artifact_store_evictions_total',
    help: 'References evicted to keep sessions and traces within their limits.',
    registers,
  });
  const expirations = new Counter({
    name: 'artifact_store_expirations_total',
    help: 'References expired by retention runs of this process.',
    registers,
  });
  const collected = new Counter({
    name: 'artifact_store_blobs_collected_bytes_total',
    help: 'Bytes freed by blob garbage collection in this process.',
    registers,
  });
  const rateLimited = new Counter({
    name: 'artifact_store_rate_limited_total',
    help: 'Requests refused by the rate limiter, by which bucket was empty (per-tenant counts: the operator usage report).',
    labelNames: ['reason'],
    registers,
  });
  const retention = new Histogram({
    name: 'artifact_store_retention_run_duration_seconds',
    help: 'Retention runs of this process.',
    buckets: [0.01, 0.1, 0.5, 1, 5, 15, 60, 300, 1800],
    registers,
  });
  // Read once per scrape (a registry collects every metric at the same time), shared by four gauges.
  let totals:
    | { at: number; value: Promise<{ refs: number; refBytes: number; blobs: number; blobBytes: number }> }
    | undefined;
  const readTotals = () => {
    if (!totals || Date.now() - totals.at > 1000)
      totals = {
        at: Date.now(),
        value: ops ? ops.storedTotals() : Promise.resolve({ refs: 0, refBytes: 0, blobs: 0, blobBytes: 0 }),
      };
    return totals.value;
  };
  const totalGauge = (name: string, help: string, pick: (t: Awaited<ReturnType<typeof readTotals>>) => number) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        this.set(pick(await readTotals()));
      },
    });
  totalGauge('artifact_store_references', 'Live references (all tenants).', (t) => t.refs);
  totalGauge(
    'artifact_store_reference_bytes',
    'Bytes of live references (a blob held twice counts twice).',
    (t) => t.refBytes,
  );
  totalGauge('artifact_store_blobs', 'Blobs recorded in the database.', (t) => t.blobs);
  totalGauge(
    'artifact_store_blob_bytes',
    'Bytes of the blobs recorded in the database (stored once each).',
    (t) => t.blobBytes,
  );

  const observer: ServiceObserver = {
    stored: (bytes) => bytesIn.inc(bytes),
    served: (bytes) => bytesOut.inc(bytes),
    evicted: (n) => evictions.inc(n),
  };

  return {
    registry,
    observer,
    request(method: string, route: string, status: number, seconds: number): void {
      const key = `${method} ${route}`;
      let r = byRoute.get(key);
      if (!r) {
        r = { method, route, counts: new Map(), buckets: BUCKETS.map(() => 0), sum: 0, count: 0 };
        byRoute.set(key, r);
      }
      r.counts.set(status, (r.counts.get(status) ?? 0) + 1);
      let i = 0;
      while (i < BUCKETS.length && seconds > BUCKETS[i]!) i++;
      if (i < BUCKETS.length) r.buckets[i]!++;
      r.sum += seconds;
      r.count++;
    },
    rateLimited(reason: string): void {
      rateLimited.inc({ reason });
    },
    retention(report: RetentionReport): void {
      retention.observe(report.durationMs / 1000);
      expirations.inc(report.expired.refs);
      evictions.inc(report.evicted.refs);
      collected.inc(report.blobs.bytes);
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** A metric whose samples are built when scraped (the shape prom-client's registry serializes). */
function scraped(
  name: string,
  help: string,
  type: 'counter' | 'histogram',
  values: () => { labels: Record<string, string | number>; value: number; metricName?: string }[],
) {
  // Only get() (and reset()) are called on a registered metric; the type is prom-client's union of its classes.
  return {
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, values: values(), aggregator: 'sum' }),
    reset: () => {},
  } as unknown as Metric;
}
