export function median(values: number[]): number {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0) return Number.NaN;
  const mid = finite.length >> 1;
  return finite.length % 2 === 1 ? finite[mid]! : (finite[mid - 1]! + finite[mid]!) / 2;
}

export function min(values: number[]): number {
  const finite = values.filter((v) => Number.isFinite(v));
  return finite.length === 0 ? Number.NaN : Math.min(...finite);
}

export function max(values: number[]): number {
  const finite = values.filter((v) => Number.isFinite(v));
  return finite.length === 0 ? Number.NaN : Math.max(...finite);
}

/** The p-th percentile (nearest rank) of the values. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function fmt(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/**
 * Steps take turns; which one goes first rotates from run to run, so no figure always runs right
 * after the same neighbour (a big transfer, a delete the S3 server is still collecting).
 */
export async function rotate(run: number, steps: (() => Promise<void>)[]): Promise<void> {
  for (let i = 0; i < steps.length; i++) await steps[(run + i) % steps.length]!();
}
