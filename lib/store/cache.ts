/**
 * A value read from somewhere slow (the control table) and kept: stale-while-revalidate.
 *
 * - The first call waits for the first load (a cold start pays it once); callers that arrive
 *   while that load is in flight share it: one request, however many callers.
 * - Within `ttlMs` of a successful load the kept value is returned without any request.
 * - After `ttlMs` the kept value is still returned at once, and one refresh starts in the
 *   background: a warm container never makes a request wait for a refresh.
 * - When a refresh fails the kept value keeps being served (one warning per failed refresh) and the
 *   next attempt waits `retryMs`, so an outage does not add a failing request to every call.
 * - Past `maxStaleMs` (a container idle for that long) the kept value is dropped and the next call
 *   waits for a load, as a cold start does: staleness is bounded even without traffic.
 */
import { warn } from '../domain/log.ts';

export interface RefreshingOptions<T> {
  /** What is loaded, for the warning line; never the value itself. */
  name: string;
  load: () => Promise<T>;
  ttlMs: number;
  /** The oldest value ever served; at least `ttlMs` (default 12 x `ttlMs`). */
  maxStaleMs?: number;
  /** Milliseconds since the epoch; injectable for tests. */
  now?: () => number;
  /** How long a stale value is served before the next refresh is tried; at most `ttlMs`. */
  retryMs?: number;
}

const DEFAULT_RETRY_MS = 30_000;
const DEFAULT_MAX_STALE_TTLS = 12;

export function refreshing<T>({ name, load, ttlMs, maxStaleMs, now = Date.now, retryMs }: RefreshingOptions<T>): () => Promise<T> {
  if (!Number.isFinite(ttlMs) || ttlMs < 0) throw new RangeError(`ttlMs must be a finite number >= 0, got ${ttlMs}`);
  const retryAfter = Math.min(retryMs ?? DEFAULT_RETRY_MS, ttlMs);
  const maxStale = Math.max(maxStaleMs ?? ttlMs * DEFAULT_MAX_STALE_TTLS, ttlMs);
  let current: { value: T; loadedAt: number; refreshAt: number } | undefined;
  let inFlight: Promise<T> | undefined;

  const start = (): Promise<T> =>
    (inFlight ??= load()
      .then((value) => {
        const loadedAt = now();
        current = { value, loadedAt, refreshAt: loadedAt + ttlMs };
        return value;
      })
      .finally(() => {
        inFlight = undefined;
      }));

  function refreshInBackground(kept: NonNullable<typeof current>): void {
    start().catch((error: unknown) => {
      const at = now();
      kept.refreshAt = at + retryAfter;
      warn(`Could not refresh ${name}; serving the value loaded ${Math.round((at - kept.loadedAt) / 1000)} s ago.`, error);
    });
  }

  return () => {
    const at = now();
    if (current && at - current.loadedAt > maxStale) current = undefined;
    if (!current) return start();
    if (at >= current.refreshAt && !inFlight) refreshInBackground(current);
    return Promise.resolve(current.value);
  };
}
