/**
 * Pet ids: positive integers no larger than 2^53 - 1, ordered by creation time.
 * The high bits are milliseconds since 2026-01-01, the low 11 bits random, so Lambda instances
 * need no coordination; the store writes with `attribute_not_exists(id)` and draws again on the
 * rare collision, so an id is never given twice. Headroom: 2^(53-11) ms is about 139 years, so
 * ids stay exact in a JavaScript number until 2165.
 *
 * Write tokens: 122 random bits (a v4 UUID) that a create stores with its pet, so that a write
 * finding its id taken can tell its own earlier attempt (same token) from another create (a
 * collision), whatever the two pets' bodies.
 */
import { randomInt, randomUUID } from 'node:crypto';

export const ID_EPOCH_MS = Date.UTC(2026, 0, 1);
export const ID_RANDOM_BITS = 11;

export type IdGenerator = () => number;

/** An id for a pet created at `nowMs` with `random` (0 to 2^bits - 1) in its low `bits` bits. */
export const idAt = (nowMs: number, random: number, bits: number = ID_RANDOM_BITS): number =>
  Math.max(1, nowMs - ID_EPOCH_MS) * 2 ** bits + random;

export const timeOrderedId: IdGenerator = () => idAt(Date.now(), randomInt(2 ** ID_RANDOM_BITS));

export type WriteTokenGenerator = () => string;

export const newWriteToken: WriteTokenGenerator = () => randomUUID();
