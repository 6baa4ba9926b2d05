/**
 * @module
 * The shape every benchmark reports: a measured value, the raw baseline
 * measured in the same run, and the ratio against it. Targets are stated,
 * never asserted: benchmarks report, tests assert behaviour.
 */
export type BenchResult = {
  /** What was measured, e.g. "event append through host (64 in flight)". */
  name: string;
  value: number;
  unit: string;
  /** The raw baseline measured in the same run, in the same unit. */
  baseline?: number;
  /**
   * value / baseline, or baseline / value for latencies: always "higher is better" unless `ratioNote` says otherwise.
   */
  ratio?: number;
  /** The target as text, e.g. "≥ 0.7×". */
  target?: string;
  /** Whether the target holds in this run. */
  met?: boolean;
  note?: string;
};

export type Bench = { name: string; run: () => Promise<BenchResult[]> };

/** Percentile of a sample (p in 0..100), by nearest rank. */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/**
 * `SKEIN_BENCH_SMOKE=1` (the CI smoke test) runs every bench at a tiny size: it checks that they run, never how fast.
 */
export const SMOKE = process.env['SKEIN_BENCH_SMOKE'] === '1';

/** `full` in a real run, `smoke` in the smoke test. */
export function scaled(full: number, smoke: number): number {
  return SMOKE ? smoke : full;
}
