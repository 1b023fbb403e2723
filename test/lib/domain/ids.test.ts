import { afterEach, describe, expect, it, vi } from 'vitest';
import { ID_EPOCH_MS, ID_RANDOM_BITS, idAt, newWriteToken, timeOrderedId } from '../../../lib/domain/ids.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('idAt', () => {
  it('puts the milliseconds since 2026 above the random bits', () => {
    expect(ID_EPOCH_MS).toBe(Date.UTC(2026, 0, 1));
    expect(ID_RANDOM_BITS).toBe(11);
    expect(idAt(ID_EPOCH_MS + 5, 3)).toBe(5 * 2048 + 3);
    expect(idAt(ID_EPOCH_MS + 5, 3, 4)).toBe(5 * 16 + 3);
  });

  it('never gives 0 or less, even for a clock before the epoch', () => {
    expect(idAt(ID_EPOCH_MS, 0)).toBe(2048);
    expect(idAt(ID_EPOCH_MS - 10_000, 7)).toBe(2048 + 7);
  });

  it('stays a safe integer until 2165, and not past 2^53 at all after', () => {
    expect(Number.isSafeInteger(idAt(Date.UTC(2165, 0, 1), 2047))).toBe(true);
    expect(Number.isSafeInteger(idAt(Date.UTC(2166, 0, 1), 2047))).toBe(false);
  });
});

describe('timeOrderedId', () => {
  it('is the current millisecond above 11 random bits', () => {
    vi.useFakeTimers({ now: ID_EPOCH_MS + 1_000, toFake: ['Date'] });
    const ids = Array.from({ length: 2_000 }, () => timeOrderedId());
    for (const id of ids) {
      expect(Math.floor(id / 2048)).toBe(1_000);
      expect(id % 2048).toBeGreaterThanOrEqual(0);
    }
    // 2,000 draws of 11 bits use most of the 2,048 values (all equal would be a constant).
    expect(new Set(ids.map((id) => id % 2048)).size).toBeGreaterThan(1_000);
  });

  it('grows with time', () => {
    vi.useFakeTimers({ now: ID_EPOCH_MS + 1_000, toFake: ['Date'] });
    const first = timeOrderedId();
    vi.setSystemTime(ID_EPOCH_MS + 1_001);
    expect(timeOrderedId()).toBeGreaterThan(first);
  });
});

describe('newWriteToken', () => {
  it('is a random v4 UUID (122 random bits), new every time', () => {
    const tokens = Array.from({ length: 100 }, () => newWriteToken());
    for (const token of tokens)
      expect(token).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(tokens).size).toBe(100);
  });
});
