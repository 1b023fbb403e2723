/**
 * The statistics an alarm asks of one period's raw values, as CloudWatch defines them
 * ("CloudWatch statistics definitions"): SampleCount, Sum, Average, Minimum, Maximum and the
 * percentiles pNN.NN. A period without values has no data point (undefined), whatever the statistic.
 */

export type Statistic =
  | { readonly kind: 'SampleCount' | 'Sum' | 'Average' | 'Minimum' | 'Maximum'; readonly name: string }
  /** `percentile` in (0, 100], e.g. 99 for p99, 99.9 for p99.9. */
  | { readonly kind: 'percentile'; readonly name: string; readonly percentile: number };

const SIMPLE = ['SampleCount', 'Sum', 'Average', 'Minimum', 'Maximum'] as const;
/** CloudWatch's percentile syntax: p0.0 to p100, at most two decimals (ExtendedStatistic, MetricStat.Stat). */
const PERCENTILE = /^p(\d{1,3}(?:\.\d{1,2})?)$/;

/** The statistic `name` names, or undefined for one the evaluator does not compute (tm90, IQM, PR(...)...). */
export function parseStatistic(name: string): Statistic | undefined {
  const simple = SIMPLE.find((kind) => kind === name);
  if (simple) return { kind: simple, name };
  const percentile = PERCENTILE.exec(name)?.[1];
  if (percentile === undefined) return undefined;
  const value = Number(percentile);
  return value >= 0 && value <= 100 ? { kind: 'percentile', name, percentile: value } : undefined;
}

/** The statistic of one period's values; undefined when the period has none (a missing data point). */
export function computeStatistic(statistic: Statistic, values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  switch (statistic.kind) {
    case 'SampleCount':
      return values.length;
    case 'Sum':
      return sum(values);
    case 'Average':
      return sum(values) / values.length;
    case 'Minimum':
      return Math.min(...values);
    case 'Maximum':
      return Math.max(...values);
    case 'percentile':
      return nearestRank(values, statistic.percentile);
  }
}

/**
 * The nearest-rank percentile: the smallest value with at least `percentile` % of the values at or
 * below it (CloudWatch: "p95 means that 95 percent of the data within the period is lower than this
 * value"). No interpolation: the result is always one of the values; p0 is the minimum.
 */
function nearestRank(values: readonly number[], percentile: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((percentile / 100) * sorted.length));
  return sorted[rank - 1]!;
}

/**
 * Whether `sampleCount` values are too few for the percentile to be significant, where
 * EvaluateLowSampleCountPercentile applies ("Percentile-based alarms and low data samples"): fewer
 * than 10/(1-p) for p in [0.5, 1), fewer than 10/p for p in (0, 0.5); never for p0, p100 or a
 * statistic that is not a percentile.
 */
export function isLowSampleCount(statistic: Statistic, sampleCount: number): boolean {
  if (statistic.kind !== 'percentile') return false;
  // In hundredths of a percent, so that p99 needs exactly 1000 values (not 1000.0000000000009).
  const hundredths = Math.round(statistic.percentile * 100);
  if (hundredths <= 0 || hundredths >= 10_000) return false;
  const needed = hundredths >= 5_000 ? 100_000 / (10_000 - hundredths) : 100_000 / hundredths;
  return sampleCount < needed;
}

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
