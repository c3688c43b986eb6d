import { fmt, max, median } from './stats.js';

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

/** A figure judged by service / baseline (medians), higher is better. */
export function ratioRow(metric: string, s: Samples, digits: number, minRatio: number): Row {
  const base = median(s.baseline);
  if (!serviceOk(s)) {
    return {
      metric,
      service: 'n/a',
      baseline: fmt(base, digits),
      ratio: 'n/a',
      target: `≥ ${minRatio.toFixed(2)}×`,
      result: 'not run',
    };
  }
  const svc = median(s.service);
  const ratio = svc / base;
  return {
    metric,
    service: fmt(svc, digits),
    baseline: fmt(base, digits),
    ratio: `${fmt(ratio, 2)}×`,
    target: `≥ ${minRatio.toFixed(2)}×`,
    result: Number.isFinite(ratio) ? (ratio >= minRatio ? 'PASS' : 'FAIL') : 'n/a',
  };
}

/** A figure shown for context next to its baseline, not judged. */
export function infoRow(metric: string, s: Samples, digits: number): Row {
  const base = median(s.baseline);
  const svc = serviceOk(s) ? median(s.service) : Number.NaN;
  return {
    metric,
    service: fmt(svc, digits),
    baseline: fmt(base, digits),
    ratio: Number.isFinite(svc) ? `${fmt(svc / base, 2)}×` : 'n/a',
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
