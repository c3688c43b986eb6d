import { cpus, loadavg } from 'node:os';
import { readFileSync } from 'node:fs';

export const MiB = 1024 * 1024;

export interface Settings {
  /** Size of the large artifact, in MiB. */
  sizeMiB: number;
  /** Runs per figure; the table shows medians. */
  runs: number;
  /** Seconds of load per small-GET run. */
  durationS: number;
  /** Seconds of the footprint section's mixed soak. */
  soakS: number;
  connections: number;
  /** Hard limit for the whole bench, in seconds. */
  timeoutS: number;
  /** Exit 1 when a row fails its target. */
  strict: boolean;
  /** Sections to run (BENCH_ONLY=transfers,small,s3,retention,mcp; default all). */
  only: Set<(typeof SECTIONS)[number]>;
  /**
   * Which code the service's processes run (BENCH_SERVICE_CODE): 'dist', the build that the image and
   * the package's bin run (default), or 'source', src/ under tsx as `npm start` runs it.
   */
  serviceCode: 'dist' | 'source';
}

const SECTIONS = [
  'transfers',
  'small',
  'python',
  's3',
  'retention',
  'mcp',
  'gateway',
  'adk',
  'ai-sdk',
  'ui',
  'views',
  'limits',
  'footprint',
  'install',
  'postgres',
  'tus',
  'parts',
] as const;

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0)
    throw new Error(`${name} must be a positive whole number, got ${JSON.stringify(raw)}`);
  return n;
}

function sections(raw: string | undefined): Settings['only'] {
  if (!raw) return new Set(SECTIONS);
  const picked = raw.split(',').map((x) => x.trim());
  const bad = picked.filter((x) => !(SECTIONS as readonly string[]).includes(x));
  if (bad.length > 0) throw new Error(`BENCH_ONLY: unknown section(s) ${bad.join(', ')}; use ${SECTIONS.join(', ')}`);
  return new Set(picked as (typeof SECTIONS)[number][]);
}

function serviceCode(raw: string | undefined): Settings['serviceCode'] {
  if (raw === undefined || raw === '' || raw === 'dist') return 'dist';
  if (raw === 'source') return 'source';
  throw new Error(`BENCH_SERVICE_CODE must be dist or source, got ${JSON.stringify(raw)}`);
}

export function readSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  return {
    sizeMiB: positiveInt(env, 'BENCH_SIZE_MIB', 256),
    runs: positiveInt(env, 'BENCH_RUNS', 5),
    durationS: positiveInt(env, 'BENCH_DURATION', 10),
    soakS: positiveInt(env, 'BENCH_SOAK_SECONDS', 60),
    connections: positiveInt(env, 'BENCH_CONNECTIONS', 50),
    timeoutS: positiveInt(env, 'BENCH_TIMEOUT', 1800),
    strict: env.BENCH_STRICT === '1',
    only: sections(env.BENCH_ONLY),
    serviceCode: serviceCode(env.BENCH_SERVICE_CODE),
  };
}

export function machineSummary(): string {
  let model = cpus()[0]?.model ?? 'unknown cpu';
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    if (line) model = line.slice(line.indexOf(':') + 1).trim();
  } catch {
    // no /proc: keep what os.cpus() said
  }
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  return `${model}, ${cpus().length} cores, Node ${process.version}, ${process.platform}/${process.arch}, load average at start ${load}`;
}
