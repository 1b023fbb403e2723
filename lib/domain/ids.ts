/**
 * Pet ids: positive integers no larger than 2^53 - 1, ordered by creation time.
 * The high bits are milliseconds since 2026-01-01, the low 11 bits random, so Lambda instances
 * need no coordination; the store writes with `attribute_not_exists(id)` and draws again on the
 * rare collision, so an id is never given twice.
 */
import { randomInt } from 'node:crypto';

const ID_EPOCH_MS = Date.UTC(2026, 0, 1);
const RANDOM_BITS = 11;

export type IdGenerator = () => number;

export const timeOrderedId: IdGenerator = () => {
  const elapsed = Math.max(1, Date.now() - ID_EPOCH_MS);
  return elapsed * 2 ** RANDOM_BITS + randomInt(2 ** RANDOM_BITS);
};
