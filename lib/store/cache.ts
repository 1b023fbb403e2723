/**
 * A value read from somewhere slow (the control table) and kept, with a hard bound on its age.
 *
 * - The first call waits for the first load (a cold start pays it once); callers that arrive
 *   while that load is in flight share it: one request, however many callers.
 * - A kept value's age counts from the start of the read that produced it: a change made before
 *   that read began is in it; a change made after is picked up by the next read.
 * - Within `ttlMs` the kept value is returned without any request.
 * - From `ttlMs` to `maxStaleMs` (the grace) the kept value is still returned at once, and one
 *   refresh starts in the background: a busy instance does not make a request wait for a refresh.
 *   A refresh that fails is retried after `retryMs` (one warning per failed refresh).
 * - Past `maxStaleMs` the kept value is never served, busy or idle: the call waits for a load, and
 *   when the load fails (the store is down) the call fails. So `maxStaleMs` bounds how long a
 *   change (a revoked key) can go unseen.
 * - A caller never waits past the deadline it passes (its request's, lib/store/deadline.ts): it
 *   gets a TimeoutError, a store fault, while the shared load goes on for whoever calls next. The
 *   load is given no caller's deadline: one shared by many requests is not aborted at its first caller's.
 */
import { warn } from '../domain/log.ts';
import type { Deadline } from '../domain/deadline.ts';
import { untilDeadline } from './deadline.ts';

export interface RefreshingOptions<T> {
  /** What is loaded, for the warning line; never the value itself. */
  name: string;
  load: () => Promise<T>;
  ttlMs: number;
  /** The oldest value ever served, from the start of its read; at least `ttlMs` (default `ttlMs` + 30 s). */
  maxStaleMs?: number;
  /** Milliseconds since the epoch; injectable for tests. */
  now?: () => number;
  /** How long after a failed background refresh the next one is tried; at most `ttlMs`. */
  retryMs?: number;
}

/** The default grace after the TTL: long enough for one background refresh and a retry. */
export const DEFAULT_GRACE_MS = 30_000;
const DEFAULT_RETRY_MS = 10_000;

/** The kept value, waited for until the caller's `deadline` (none: as long as the load takes). */
export type Refreshing<T> = (deadline?: Deadline) => Promise<T>;

export function refreshing<T>({
  name,
  load,
  ttlMs,
  maxStaleMs,
  now = Date.now,
  retryMs,
}: RefreshingOptions<T>): Refreshing<T> {
  if (!Number.isFinite(ttlMs) || ttlMs < 0) throw new RangeError(`ttlMs must be a finite number >= 0, got ${ttlMs}`);
  const retryAfter = Math.min(retryMs ?? DEFAULT_RETRY_MS, ttlMs);
  const maxStale = Math.max(maxStaleMs ?? ttlMs + DEFAULT_GRACE_MS, ttlMs);
  let current: { value: T; readAt: number; refreshAt: number } | undefined;
  let inFlight: Promise<T> | undefined;

  const start = (): Promise<T> => {
    if (inFlight) return inFlight;
    const readAt = now();
    inFlight = load()
      .then((value) => {
        current = { value, readAt, refreshAt: readAt + ttlMs };
        return value;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };

  function refreshInBackground(kept: NonNullable<typeof current>): void {
    start().catch((error: unknown) => {
      const at = now();
      kept.refreshAt = at + retryAfter;
      warn(`Could not refresh ${name}; serving the value read ${Math.round((at - kept.readAt) / 1000)} s ago.`, error);
    });
  }

  return (deadline) => {
    const at = now();
    if (current && at - current.readAt > maxStale) current = undefined;
    if (!current) return untilDeadline(start(), name, deadline);
    if (at >= current.refreshAt && !inFlight) refreshInBackground(current);
    return Promise.resolve(current.value);
  };
}
