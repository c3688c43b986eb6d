/** Small-request load with autocannon, run from the bench process (never inside a server). */
import autocannon from 'autocannon';

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export async function load(url: string, headers: Record<string, string>, connections: number, durationS: number): Promise<LoadResult> {
  const result = await autocannon({ url, headers, connections, duration: durationS, pipelining: 1, timeout: 10 });
  const bad = result.errors + result.timeouts + result.non2xx;
  if (bad > 0 || result.requests.total === 0) {
    throw new Error(
      `${url}: ${result.requests.total} requests, ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  }
  return { requestsPerSecond: result.requests.total / result.duration, p50Ms: result.latency.p50, p99Ms: result.latency.p99 };
}
