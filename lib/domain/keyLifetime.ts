/**
 * How long an API key lives, declared once: `npm run keys` writes each key's `expiresAt` from these,
 * the key store reads every key's expiry through `keyExpiry`, and the authorizer and the functions
 * refuse a key past it with the 401 any unknown key gets (docs/operating.md "API keys").
 */

const HOUR_MS = 60 * 60_000;
const DAY_MS = 24 * HOUR_MS;

/** A key created without `--expires-in` expires this long after its creation. */
export const DEFAULT_KEY_LIFETIME_MS = 90 * DAY_MS;
/**
 * No key lives longer, whatever its item says: a key's expiry is at most this long after its
 * creation, and a key created before keys had an expiry expires this long after its creation.
 */
export const MAX_KEY_LIFETIME_MS = 365 * DAY_MS;
/** The shortest lifetime `--expires-in` takes. */
export const MIN_KEY_LIFETIME_MS = HOUR_MS;
/**
 * `keys rotate` issues the successor at once and shortens the old key's life to at most this from
 * then (never lengthens it): time for its holder to switch, after which the old key answers 401.
 */
export const ROTATION_OVERLAP_MS = 7 * DAY_MS;
/**
 * A key's last use is written at most once per this interval (a conditional update that only an
 * older `lastUsedAt` lets through), and each authorizer sandbox tries at most once per key per
 * interval: the write cost is bounded by keys x sandboxes, never by requests.
 */
export const KEY_USE_RECORD_INTERVAL_MS = 15 * 60_000;

/**
 * When a key stops working (epoch ms): its own `expiresAt`, never more than MAX_KEY_LIFETIME_MS
 * after its creation; a key without one (created before keys expired) at creation + that maximum.
 */
export function keyExpiry(createdAtMs: number, expiresAtMs?: number): number {
  return Math.min(expiresAtMs ?? Number.POSITIVE_INFINITY, createdAtMs + MAX_KEY_LIFETIME_MS);
}

/** Whether a key expiring at `expiresAtMs` (none: a configured key, never) is expired at `nowMs`. */
export const isExpired = (expiresAtMs: number | undefined, nowMs: number): boolean =>
  expiresAtMs !== undefined && nowMs >= expiresAtMs;
