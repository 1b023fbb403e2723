/**
 * The bench's statistics: medians, and how far a median may be trusted (a bootstrap interval).
 * Resampling is seeded, so the same samples always give the same interval.
 */

/** The `p`th percentile by the nearest-rank method (NaN for no values). */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

export const median = (values: readonly number[]): number => percentile(values, 50);

/** A median with its 90% bootstrap interval. */
export interface Estimate {
  median: number;
  low: number;
  high: number;
  n: number;
}

const RESAMPLES = 2_000;
const CONFIDENCE = 0.9;

/** A small seeded generator (mulberry32): the same run's samples give the same interval. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The median of `values` and the 90% interval of the medians of `RESAMPLES` resamples (percentile bootstrap). */
export function estimate(values: readonly number[]): Estimate {
  const random = seeded(values.length * 7_919);
  const medians: number[] = [];
  for (let i = 0; i < RESAMPLES; i++) {
    medians.push(median(Array.from({ length: values.length }, () => values[Math.floor(random() * values.length)]!)));
  }
  const tail = ((1 - CONFIDENCE) / 2) * 100;
  return {
    median: median(values),
    low: percentile(medians, tail),
    high: percentile(medians, 100 - tail),
    n: values.length,
  };
}

/**
 * The paired difference `b - a`: sample i of each ran in the same round, side by side, so the
 * machine's drift between rounds cancels out. Its median and 90% interval.
 */
export function pairedDifference(a: readonly number[], b: readonly number[]): Estimate {
  if (a.length !== b.length) throw new Error(`paired samples differ in number: ${a.length} and ${b.length}`);
  return estimate(b.map((value, i) => value - a[i]!));
}
