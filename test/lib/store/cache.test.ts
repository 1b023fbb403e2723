import { afterAll, beforeAll, afterEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { refreshing } from '../../../lib/store/cache.ts';

const TTL = 5 * 60_000;

/** A clock the test moves by hand, and a load whose every call the test settles by hand. */
function setUp(maxStaleMs?: number) {
  let at = Date.parse('2025-01-01T00:00:00Z');
  const pending: { resolve: (value: number) => void; reject: (error: Error) => void }[] = [];
  const load = vi.fn(() => new Promise<number>((resolve, reject) => pending.push({ resolve, reject })));
  const get = refreshing({
    name: 'the test value',
    load,
    ttlMs: TTL,
    now: () => at,
    retryMs: 10_000,
    ...(maxStaleMs ? { maxStaleMs } : {}),
  });
  const settle = async (outcome: number | Error) => {
    const next = pending.shift();
    if (!next) throw new Error('no load in flight');
    if (outcome instanceof Error) next.reject(outcome);
    else next.resolve(outcome);
    await new Promise((done) => setImmediate(done));
  };
  const advance = (ms: number): void => {
    at += ms;
  };
  return { get, load, settle, advance };
}

let warnings: MockInstance<typeof console.warn>;
beforeAll(() => {
  warnings = vi.spyOn(console, 'warn').mockImplementation(() => {});
});
afterEach(() => warnings.mockClear());
afterAll(() => warnings.mockRestore());

describe('refreshing (stale-while-revalidate)', () => {
  it('makes the first callers wait for one shared load, then serves the value without loading', async () => {
    const { get, load, settle } = setUp();
    const first = [get(), get()];
    expect(load).toHaveBeenCalledTimes(1);
    await settle(1);
    expect(await Promise.all(first)).toEqual([1, 1]);
    expect(await get()).toBe(1);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('after the TTL answers at once with the kept value and refreshes once in the background', async () => {
    const { get, load, settle, advance } = setUp();
    const first = get();
    await settle(1);
    await first;
    advance(TTL);
    // Resolved although the refresh has not finished: no caller waits for it.
    expect(await get()).toBe(1);
    expect(await get()).toBe(1);
    expect(load).toHaveBeenCalledTimes(2);
    await settle(2);
    expect(await get()).toBe(2);
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('keeps serving the kept value, with a warning, when a refresh fails, and retries after retryMs', async () => {
    const { get, load, settle, advance } = setUp();
    const first = get();
    await settle(1);
    await first;
    advance(TTL);
    expect(await get()).toBe(1);
    await settle(new Error('store down'));
    expect(warnings).toHaveBeenCalledTimes(1);
    expect(String(warnings.mock.calls[0]?.[0])).toContain('Could not refresh the test value');
    expect(await get()).toBe(1);
    expect(load).toHaveBeenCalledTimes(2);
    advance(10_000);
    expect(await get()).toBe(1);
    expect(load).toHaveBeenCalledTimes(3);
  });

  it('throws when the first load fails, and loads again on the next call', async () => {
    const { get, load, settle } = setUp();
    const first = expect(get()).rejects.toThrow('no table');
    await settle(new Error('no table'));
    await first;
    const second = get();
    await settle(3);
    expect(await second).toBe(3);
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('makes the caller wait again once the kept value is older than maxStaleMs', async () => {
    const { get, load, settle, advance } = setUp(TTL * 2);
    const first = get();
    await settle(1);
    await first;
    advance(TTL * 2 + 1);
    let answered = false;
    const late = get().then((value) => {
      answered = true;
      return value;
    });
    await new Promise((done) => setImmediate(done));
    expect(answered).toBe(false);
    await settle(2);
    expect(await late).toBe(2);
    expect(load).toHaveBeenCalledTimes(2);
  });
});

describe('refreshing: the bound on a kept value', () => {
  it('never serves a value older than maxStaleMs from the start of its read, even while a refresh is in flight', async () => {
    const { get, load, settle, advance } = setUp(TTL + 30_000);
    const first = get();
    await settle(1);
    await first;
    advance(TTL);
    expect(await get()).toBe(1); // starts a refresh that does not finish
    advance(30_000);
    expect(await get()).toBe(1);
    advance(1);
    let answered = false;
    const late = get().then((value) => {
      answered = true;
      return value;
    });
    await new Promise((done) => setImmediate(done));
    expect(answered).toBe(false);
    expect(load).toHaveBeenCalledTimes(2);
    await settle(2);
    expect(await late).toBe(2);
  });

  it('fails past maxStaleMs when the load fails: nothing stale is served', async () => {
    const { get, settle, advance } = setUp(TTL + 30_000);
    const first = get();
    await settle(1);
    await first;
    advance(TTL + 30_001);
    const late = expect(get()).rejects.toThrow('store down');
    await settle(new Error('store down'));
    await late;
  });

  it('counts age from when the read began, not when it ended', async () => {
    const { get, settle, advance } = setUp(TTL + 30_000);
    const first = get();
    advance(20_000); // a slow read
    await settle(1);
    await first;
    advance(TTL + 10_001);
    let answered = false;
    void get().then(() => (answered = true));
    await new Promise((done) => setImmediate(done));
    expect(answered).toBe(false);
    await settle(2);
  });

  it("makes a caller stop waiting at its request's deadline, and the load goes on for the next caller", async () => {
    const { get, load, settle } = setUp();
    const waited = get(Date.now() + 50).then(
      () => 'answered',
      (error: Error) => error.name,
    );
    expect(await waited).toBe('TimeoutError');
    const next = get();
    expect(load).toHaveBeenCalledTimes(1);
    await settle(7);
    expect(await next).toBe(7);
  });
});
