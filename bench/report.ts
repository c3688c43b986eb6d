import { fmt, max, median, min } from './stats.js';

export interface Row {
  metric: string;
  service: string;
  baseline: string;
  ratio: string;
  target: string;
  result: string;
}

/** Runs of one figure; `service` is null when the service could not be measured. */
export interface Samples {
  service: number[] | null;
  baseline: number[];
}

export const samples = (): Samples => ({ service: [], baseline: [] });

const serviceOk = (s: Samples): s is { service: number[]; baseline: number[] } =>
  s.service !== null && s.service.length > 0;

/** `median (min–max)` of the runs; the median alone for one run. */
export function spread(values: number[], digits: number, unit = ''): string {
  const m = `${fmt(median(values), digits)}${unit}`;
  return values.length > 1 ? `${m} (${fmt(min(values), digits)}–${fmt(max(values), digits)})` : m;
}

/**
 * The ratio of each round (service run i over baseline run i: the rounds alternate, so each pair
 * shared the machine's state), where the runs pair up; else the ratio of the medians alone.
 */
function roundRatios(s: { service: number[]; baseline: number[] }): number[] {
  if (s.service.length !== s.baseline.length) return [median(s.service) / median(s.baseline)];
  return s.service.map((v, i) => v / s.baseline[i]!);
}

/**
 * A figure judged by service / baseline, higher is better. Cells show median (min–max) over the
 * rounds; the ratio is the median of the rounds' ratios, which is judged.
 */
export function ratioRow(metric: string, s: Samples, digits: number, minRatio: number): Row {
  if (!serviceOk(s)) {
    return {
      metric,
      service: 'n/a',
      baseline: spread(s.baseline, digits),
      ratio: 'n/a',
      target: `≥ ${minRatio.toFixed(2)}×`,
      result: 'not run',
    };
  }
  const ratios = roundRatios(s);
  const ratio = median(ratios);
  return {
    metric,
    service: spread(s.service, digits),
    baseline: spread(s.baseline, digits),
    ratio: spread(ratios, 2, '×'),
    target: `≥ ${minRatio.toFixed(2)}×`,
    result: Number.isFinite(ratio) ? (ratio >= minRatio ? 'PASS' : 'FAIL') : 'n/a',
  };
}

/**
 * A figure whose ratio cell lists the rounds' ratios in order (a rate that swings between rounds
 * shows there, where a median would hide it). `judge`: 'every' round must reach `minRatio` (the
 * worst is judged), or their 'median' must.
 */
export function perRoundRow(
  metric: string,
  s: Samples,
  digits: number,
  minRatio: number,
  judge: 'every' | 'median' = 'every',
): Row {
  const target = `≥ ${minRatio.toFixed(2)}×${judge === 'every' ? ' every round' : ''}`;
  if (!serviceOk(s) || s.service.length !== s.baseline.length) {
    return {
      metric,
      service: serviceOk(s) ? spread(s.service, digits) : 'n/a',
      baseline: spread(s.baseline, digits),
      ratio: 'n/a',
      target,
      result: 'not run',
    };
  }
  const ratios = roundRatios(s);
  const judged = judge === 'every' ? min(ratios) : median(ratios);
  return {
    metric,
    service: spread(s.service, digits),
    baseline: spread(s.baseline, digits),
    ratio: `${ratios.map((r) => `${fmt(r, 2)}×`).join(', ')}; ${judge === 'every' ? 'worst' : 'median'} ${fmt(judged, 2)}×`,
    target,
    result: Number.isFinite(judged) ? (judged >= minRatio ? 'PASS' : 'FAIL') : 'n/a',
  };
}

/** A figure shown for context next to its baseline, not judged (cells as in ratioRow). */
export function infoRow(metric: string, s: Samples, digits: number): Row {
  if (!serviceOk(s))
    return { metric, service: 'n/a', baseline: spread(s.baseline, digits), ratio: 'n/a', target: '—', result: 'info' };
  return {
    metric,
    service: spread(s.service, digits),
    baseline: spread(s.baseline, digits),
    ratio: spread(roundRatios(s), 2, '×'),
    target: '—',
    result: 'info',
  };
}

/** A memory ceiling: cells show median (max) of the runs; the worst run is judged. */
export function ceilingRow(metric: string, s: Samples, limit: number, unit: string): Row {
  const cell = (v: number[]) => `${fmt(median(v), 1)} (max ${fmt(max(v), 1)})`;
  const target = `≤ ${limit} ${unit}`;
  if (!serviceOk(s))
    return { metric, service: 'n/a', baseline: cell(s.baseline), ratio: '—', target, result: 'not run' };
  const worst = max(s.service);
  return {
    metric,
    service: cell(s.service),
    baseline: cell(s.baseline),
    ratio: '—',
    target,
    result: Number.isFinite(worst) ? (worst <= limit ? 'PASS' : 'FAIL') : 'n/a',
  };
}

export function markdownTable(rows: Row[]): string {
  const head: Row = {
    metric: 'metric',
    service: 'service',
    baseline: 'baseline (same run)',
    ratio: 'ratio',
    target: 'target',
    result: 'result',
  };
  const keys = Object.keys(head) as (keyof Row)[];
  const line = (r: Row) => `| ${keys.map((k) => r[k]).join(' | ')} |`;
  const numeric = new Set<keyof Row>(['service', 'baseline', 'ratio']);
  const rule = `|${keys.map((k) => (numeric.has(k) ? '---:' : '---')).join('|')}|`;
  return [line(head), rule, ...rows.map(line)].join('\n');
}
