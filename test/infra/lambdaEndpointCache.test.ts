/**
 * The bundles' endpoint cache (infra/lambdaEndpointCache.ts) against the package it stands in for
 * (`@aws-sdk/endpoint-cache`, on mnemonist's LRU cache): the same answers to the same calls, clock
 * and random draws included, and a DynamoDB client built as a bundle carries it and no mnemonist.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { EndpointCache as PackageCache } from '@aws-sdk/endpoint-cache';
import { EndpointCache } from '../../infra/lambdaEndpointCache.ts';
import { buildBundle } from '../../tools/bench/bundles.ts';

afterEach(() => vi.restoreAllMocks());

const KEYS = ['a', 'b', 'c', 'd', 'e'] as const;
const key = fc.constantFrom(...KEYS);
const endpoints = fc.array(fc.record({ Address: fc.constantFrom('x.example', 'y.example', 'z.example'), CachePeriodInMinutes: fc.integer({ min: 0, max: 3 }) }), { maxLength: 3 });

type Call =
  | { op: 'set'; key: string; endpoints: { Address: string; CachePeriodInMinutes: number }[] }
  | { op: 'get' | 'has' | 'delete'; key: string }
  | { op: 'getEndpoint'; key: string; draw: number }
  | { op: 'clear' }
  | { op: 'tick'; ms: number };

const call: fc.Arbitrary<Call> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('set' as const), key, endpoints }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constantFrom('get' as const, 'has' as const, 'delete' as const), key }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('getEndpoint' as const), key, draw: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.constant({ op: 'clear' as const }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 120_000 }) }) },
);

/** What one call answers (undefined for the calls that answer nothing). */
function apply(cache: EndpointCache | PackageCache, each: Call): unknown {
  switch (each.op) {
    case 'set':
      return cache.set(each.key, each.endpoints);
    case 'get':
      return cache.get(each.key);
    case 'has':
      return cache.has(each.key);
    case 'delete':
      return cache.delete(each.key);
    case 'getEndpoint':
      vi.spyOn(Math, 'random').mockReturnValueOnce(each.draw);
      return cache.getEndpoint(each.key);
    case 'clear':
      return cache.clear();
    case 'tick':
      return undefined;
  }
}

describe('the bundles\' EndpointCache', () => {
  it('answers every sequence of calls as the package does (eviction at capacity, refresh order, expiry)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(call, { maxLength: 60 }), (capacity, calls) => {
        let now = 1_800_000_000_000;
        vi.spyOn(Date, 'now').mockImplementation(() => now);
        const ours = new EndpointCache(capacity);
        const theirs = new PackageCache(capacity);
        for (const each of calls) {
          if (each.op === 'tick') now += each.ms;
          expect(apply(ours, each), JSON.stringify(each)).toEqual(apply(theirs, each));
        }
        // What is left, key by key, without touching the order.
        for (const each of KEYS) expect(ours.has(each), each).toBe(theirs.has(each));
        vi.restoreAllMocks();
      }),
      { numRuns: 400 },
    );
  });

  it('refuses a capacity the package refuses', () => {
    for (const capacity of [0, -1]) {
      expect(() => new PackageCache(capacity)).toThrow(/capacity should be positive/);
      expect(() => new EndpointCache(capacity)).toThrow(/capacity should be positive/);
    }
  });

  it('replaces the package in a bundle of the DynamoDB client: no mnemonist, no obliterator', async () => {
    const built = await buildBundle('getPet', 'functions/getPet.ts');
    const kept = Object.keys(built.inputs).filter((input) => built.inputs[input]! > 0);
    expect(kept.filter((input) => /node_modules\/(mnemonist|obliterator|@aws-sdk\/endpoint-cache)\//.test(input))).toEqual([]);
    expect(kept).toContain('infra/lambdaEndpointCache.ts');
  });
});
