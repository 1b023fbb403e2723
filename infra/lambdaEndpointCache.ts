/**
 * The Lambda bundles' stand-in for `@aws-sdk/endpoint-cache` (esbuild aliases that package to this
 * file: `lambdaAliases` in infra/bundling.ts). The DynamoDB client builds an `EndpointCache` for
 * endpoint discovery when it is constructed, and in the SDK we bundle no DynamoDB command reads it
 * (none adds the endpoint-discovery middleware). The package keeps its addresses in mnemonist's LRU
 * cache, which with obliterator is 7.4 kB of every bundle and about 1 ms of a cold start's
 * import (docs/performance.md). This is the same cache on a `Map`, kept faithful should a later SDK
 * read it: the least recently used key is evicted at capacity, `get` and `set` (and `delete`, which
 * stores an empty list) refresh a key, `has` does not, and expired addresses are dropped as they
 * are read. test/infra/lambdaEndpointCache.test.ts drives it and the package's side by side.
 * Bundled code: no dependency.
 */

/** An address as DynamoDB's DescribeEndpoints returns it (the package's `Endpoint`). */
export interface Endpoint {
  Address: string;
  CachePeriodInMinutes: number;
}

export interface EndpointWithExpiry {
  Address: string;
  /** Epoch ms after which the address is no longer served. */
  Expires: number;
}

export class EndpointCache {
  private readonly cache = new Map<string, EndpointWithExpiry[]>();

  constructor(private readonly capacity: number) {
    // As mnemonist's LRU cache refuses one.
    if (typeof capacity !== 'number' || capacity <= 0) throw new Error('mnemonist/lru-cache: capacity should be positive number.');
  }

  /** One of the key's live addresses, at random (spreading calls over them, as the package does). */
  getEndpoint(key: string): string | undefined {
    const endpoints = this.get(key);
    if (!endpoints || endpoints.length === 0) return undefined;
    return endpoints[Math.floor(Math.random() * endpoints.length)]!.Address;
  }

  /** The key's addresses not yet expired; a key whose addresses have all expired is emptied. */
  get(key: string): EndpointWithExpiry[] | undefined {
    if (!this.has(key)) return undefined;
    const endpoints = this.cache.get(key)!;
    this.refresh(key, endpoints);
    const now = Date.now();
    const live = endpoints.filter((endpoint) => now < endpoint.Expires);
    if (live.length === 0) {
      this.delete(key);
      return undefined;
    }
    return live;
  }

  set(key: string, endpoints: readonly Endpoint[]): void {
    const now = Date.now();
    this.refresh(
      key,
      endpoints.map(({ Address, CachePeriodInMinutes }) => ({ Address, Expires: now + CachePeriodInMinutes * 60 * 1000 })),
    );
  }

  /** As the package does: the key stays, with no addresses. */
  delete(key: string): void {
    this.refresh(key, []);
  }

  has(key: string): boolean {
    return (this.cache.get(key)?.length ?? 0) > 0;
  }

  clear(): void {
    this.cache.clear();
  }

  /** Stores `endpoints` under `key` as the most recently used, evicting the least recently used beyond capacity. */
  private refresh(key: string, endpoints: EndpointWithExpiry[]): void {
    this.cache.delete(key);
    this.cache.set(key, endpoints);
    if (this.cache.size > this.capacity) this.cache.delete(this.cache.keys().next().value!);
  }
}
