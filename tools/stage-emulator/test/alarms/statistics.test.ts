/**
 * The statistics of one period's raw values on small known series, the nearest-rank percentile,
 * and the low-sample-count thresholds of "Percentile-based alarms and low data samples".
 */
import { describe, expect, it } from 'vitest';
import { computeStatistic, isLowSampleCount, parseStatistic, type Statistic } from '../../src/alarms/statistics.ts';

const stat = (name: string): Statistic => {
  const parsed = parseStatistic(name);
  if (!parsed) throw new Error(`${name} does not parse`);
  return parsed;
};
const ONE_TO_HUNDRED = Array.from({ length: 100 }, (_, index) => index + 1);

describe('statistics of a period', () => {
  it.each([
    ['SampleCount', [3, 1, 2, 2], 4],
    ['Sum', [3, 1, 2, 2], 8],
    ['Average', [3, 1, 2, 2], 2],
    ['Minimum', [3, 1, 2, 2], 1],
    ['Maximum', [3, 1, 2, 2], 3],
    ['Average', [0, 0, 1, 0], 0.25],
    ['Sum', [0], 0],
  ])('%s of %j is %d', (name, values, expected) => {
    expect(computeStatistic(stat(name), values)).toBe(expected);
  });

  it.each(['SampleCount', 'Sum', 'Average', 'Minimum', 'Maximum', 'p99'])(
    '%s of a period without values is no data point (missing), not 0',
    (name) => {
      expect(computeStatistic(stat(name), [])).toBeUndefined();
    },
  );

  it.each([
    ['p50', ONE_TO_HUNDRED, 50],
    ['p99', ONE_TO_HUNDRED, 99],
    ['p99.5', ONE_TO_HUNDRED, 100],
    ['p100', ONE_TO_HUNDRED, 100],
    ['p0', ONE_TO_HUNDRED, 1],
    ['p0.5', ONE_TO_HUNDRED, 1],
    ['p90', [40, 10, 30, 20], 40],
    ['p75', [40, 10, 30, 20], 30],
    ['p50', [40, 10, 30, 20], 20],
    ['p25', [40, 10, 30, 20], 10],
    ['p99', [120], 120],
    ['p99', [5, 5, 5, 9000], 9000],
  ])('%s of %j is %d (nearest rank, one of the values)', (name, values, expected) => {
    expect(computeStatistic(stat(name), values)).toBe(expected);
  });

  it.each(['tm90', 'IQM', 'PR(:300)', 'TC(0.005:0.030)', 'p', 'p101', 'p99.999', 'average', 'Max'])(
    '%s is not a statistic the evaluator computes',
    (name) => {
      expect(parseStatistic(name)).toBeUndefined();
    },
  );
});

describe('low sample count for percentiles', () => {
  it.each([
    ['p99', 999, true],
    ['p99', 1000, false],
    ['p90', 99, true],
    ['p90', 100, false],
    ['p99.9', 9999, true],
    ['p99.9', 10_000, false],
    ['p50', 19, true],
    ['p50', 20, false],
    ['p10', 99, true],
    ['p10', 100, false],
    ['p100', 1, false],
    ['p0', 1, false],
    ['Maximum', 1, false],
  ])('%s with %d values: low %s', (name, count, low) => {
    expect(isLowSampleCount(stat(name), count)).toBe(low);
  });
});
