/**
 * A value read from somewhere slow (the parameter store, Secrets Manager) and kept for a while.
 *
 * - Within `ttlMs` of a successful load the kept value is returned without any request.
 * - Callers that arrive while a load is in flight share it: one request, however many callers.
 * - When a refresh fails but an earlier load succeeded, the stale value keeps being served (with one
 *   warning per failed refresh) and the next attempt waits `retryMs`, so an outage does not add a
 *   failing request to every call. With nothing loaded yet, the error is thrown to the caller and
 *   the next call tries again.
 */
import { warn } from './log.ts';

export interface RefreshingOptions<T> {
  /** What is loaded, for the warning line; never the value itself. */
  name: string;
  load: () => Promise<T>;
  ttlMs: number;
  /** Milliseconds since the epoch; injectable for tests. */
  now?: () => number;
  /** How long a stale value is served before the next refresh is tried; at most `ttlMs`. */
  retryMs?: number;
}

const DEFAULT_RETRY_MS = 30_000;

export function refreshing<T>({ name, load, ttlMs, now = Date.now, retryMs }: RefreshingOptions<T>): () => Promise<T> {
  if (!Number.isFinite(ttlMs) || ttlMs < 0) throw new RangeError(`ttlMs must be a finite number >= 0, got ${ttlMs}`);
  const retryAfter = Math.min(retryMs ?? DEFAULT_RETRY_MS, ttlMs);
  let current: { value: T; loadedAt: number; expiresAt: number } | undefined;
  let inFlight: Promise<T> | undefined;

  async function refresh(): Promise<T> {
    try {
      const value = await load();
      const loadedAt = now();
      current = { value, loadedAt, expiresAt: loadedAt + ttlMs };
      return value;
    } catch (error) {
      if (!current) throw error;
      const at = now();
      current.expiresAt = at + retryAfter;
      warn(`Could not refresh ${name}; serving the value loaded ${Math.round((at - current.loadedAt) / 1000)} s ago.`, error);
      return current.value;
    }
  }

  return () => {
    if (current && now() < current.expiresAt) return Promise.resolve(current.value);
    inFlight ??= refresh().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
}
