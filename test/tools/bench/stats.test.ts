/**
 * The bench's statistics (tools/bench/stats.ts): the nearest-rank percentile its medians use, and the
 * paired difference with its bootstrap interval that decides whether a performance change ships.
 */
import { describe, expect, it } from 'vitest';
import { estimate, pairedDifference, percentile } from '../../../tools/bench/stats.ts';

describe('percentile', () => {
  it('takes the nearest rank, the lower middle of an even count', () => {
    expect(percentile([5, 1, 3], 50)).toBe(3);
    expect(percentile([4, 1, 3, 2], 50)).toBe(2);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90)).toBe(9);
    expect(percentile([], 50)).toBeNaN();
  });
});

describe('estimate', () => {
  it('brackets the median by an interval from the samples themselves, the same for the same samples', () => {
    const samples = Array.from({ length: 41 }, (_, i) => 40 + (i % 7) + (i % 3));
    const first = estimate(samples);
    expect(first.n).toBe(41);
    expect(first.low).toBeLessThanOrEqual(first.median);
    expect(first.high).toBeGreaterThanOrEqual(first.median);
    expect(first.high).toBeGreaterThan(first.low);
    expect(Math.min(...samples)).toBeLessThanOrEqual(first.low);
    expect(Math.max(...samples)).toBeGreaterThanOrEqual(first.high);
    expect(estimate(samples)).toEqual(first);
  });
});

describe('pairedDifference', () => {
  it('is the median of the per-round differences (b - a), so a drift shared by both rounds cancels out', () => {
    // Each round 3 ms apart, while the machine's speed swings by 50 ms from round to round.
    const a = Array.from({ length: 41 }, (_, i) => 50 + (i % 2) * 50);
    const b = a.map((value) => value - 3);
    expect(pairedDifference(a, b)).toMatchObject({ median: -3, low: -3, high: -3, n: 41 });
    // Unpaired, the two medians would say nothing at this spread: their intervals overlap.
    expect(estimate(b).high).toBeGreaterThan(estimate(a).low);
  });

  it('refuses samples that are not paired', () => {
    expect(() => pairedDifference([1, 2], [1])).toThrow(/differ in number/);
  });
});
