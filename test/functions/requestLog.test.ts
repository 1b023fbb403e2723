/**
 * The request log (lib/http/requestLog.ts): one JSON line per invocation with the ids, operation,
 * status, error code, latency, cold start and key id; never the key, the Authorization header or
 * the body. And X-Request-Id on every answer, `requestId` in every 5xx body.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHandler as createPetHandler } from '../../functions/createPet.ts';
import { createHandler as getPetHandler } from '../../functions/getPet.ts';
import { StaticApiKeys, digestKey, keyIdOf, type ApiKeyStore } from '../../lib/domain/apiKeys.ts';
import { setRequestLogWriter, type RequestLogLine } from '../../lib/http/requestLog.ts';
import { dependenciesFromEnvironment, type Dependencies } from '../../lib/service.ts';
import { apiEvent, call } from '../support/events.ts';
import { TEST_API_KEY, freshEnvironment, useEmbeddedStore } from '../support/store.ts';

const endpoint = useEmbeddedStore();
let service: Dependencies;
beforeAll(async () => {
  service = dependenciesFromEnvironment(await freshEnvironment(endpoint()));
});

let lines: string[] = [];
const capture = () => {
  lines = [];
  setRequestLogWriter((line) => lines.push(line));
};
afterEach(() => setRequestLogWriter(() => undefined));

const SECRET_NAME = 'Rex-the-secret-body-value';
const parsed = () => lines.map((line) => JSON.parse(line) as RequestLogLine);

function expectNothingLeaks(authorization: string) {
  const text = lines.join('\n');
  expect(text).not.toContain(TEST_API_KEY);
  expect(text).not.toContain(authorization);
  expect(text).not.toContain(SECRET_NAME);
  expect(text.toLowerCase()).not.toContain('authorization');
  expect(text).not.toContain(digestKey(TEST_API_KEY).toString('hex'));
}

describe('the request log', () => {
  it('writes one line for a 201, with the key id, the ids and no key or body', async () => {
    capture();
    const event = apiEvent('POST', '/pets', { body: { name: SECRET_NAME, categoryId: 1 } });
    const res = await call(createPetHandler(service), event);
    expect(res.status).toBe(201);
    expect(res.headers['x-request-id']).toBe(event.requestContext.requestId);
    expect(lines).toHaveLength(1);
    const [line] = parsed();
    expect(line).toEqual({
      level: 'INFO',
      message: 'request',
      operation: 'createPet',
      status: 201,
      latencyMs: expect.any(Number),
      coldStart: true,
      requestId: event.requestContext.requestId,
      awsRequestId: expect.any(String),
      keyId: keyIdOf(digestKey(TEST_API_KEY)),
      petId: res.body.id,
    });
    expect(line!.keyId).toMatch(/^[0-9a-f]{12}$/);
    expect(line!.latencyMs).toBeGreaterThanOrEqual(0);
    expectNothingLeaks(`Bearer ${TEST_API_KEY}`);
  });

  it('names the pet a create answered, and says when it was an Idempotency-Key replay', async () => {
    capture();
    const handler = createPetHandler(service);
    const keyed = (key: string) =>
      apiEvent('POST', '/pets', { body: { name: 'Rex', categoryId: 1 }, headers: { 'Idempotency-Key': key } });
    const first = await call(handler, keyed('order-1'));
    const replay = await call(handler, keyed('order-1'));
    const other = await call(handler, keyed('order-2'));
    expect([first.status, replay.status, other.status]).toEqual([201, 201, 201]);
    expect(parsed().map(({ petId, replayed }) => ({ petId, replayed }))).toEqual([
      { petId: first.body.id, replayed: undefined },
      { petId: first.body.id, replayed: true },
      { petId: other.body.id, replayed: undefined },
    ]);
    expect(lines[0]).not.toContain('replayed');
  });

  it("gives the latency in whole milliseconds from the request's arrival to its answer", async () => {
    capture();
    // The clock stands still but for keys that take 150.4 ms to read: the latency is exactly that, rounded.
    vi.useFakeTimers({ toFake: ['hrtime'] });
    const keys = StaticApiKeys.fromList(TEST_API_KEY);
    const slowKeys: ApiKeyStore = {
      keyDigests: async () => {
        vi.advanceTimersByTime(150.4);
        return keys.keyDigests();
      },
    };
    try {
      const res = await call(getPetHandler({ ...service, keys: slowKeys }), apiEvent('GET', '/pets/1'));
      expect(res.status).toBe(404);
    } finally {
      vi.useRealTimers();
    }
    const [line] = parsed();
    expect(line!.latencyMs).toBe(150);
  });

  it('counts only the first invocation of a handler as a cold start', async () => {
    capture();
    const handler = getPetHandler(service);
    await call(handler, apiEvent('GET', '/pets/1'));
    await call(handler, apiEvent('GET', '/pets/1'));
    expect(parsed().map((line) => [line.status, line.coldStart])).toEqual([
      [404, true],
      [404, false],
    ]);
    expect(parsed()[0]).toMatchObject({ errorCode: 'NOT_FOUND', level: 'INFO' });
  });

  it('writes one line for a 401, with its error code and no key id', async () => {
    capture();
    const wrongKey = 'Bearer not-the-key-0123456789';
    const event = apiEvent('POST', '/pets', {
      anonymous: true,
      body: { name: SECRET_NAME, categoryId: 1 },
      headers: { Authorization: wrongKey },
    });
    const res = await call(createPetHandler(service), event);
    expect(res.status).toBe(401);
    expect(res.body).not.toHaveProperty('requestId');
    expect(res.headers['x-request-id']).toBe(event.requestContext.requestId);
    expect(lines).toHaveLength(1);
    const [line] = parsed();
    expect(line).toMatchObject({ level: 'INFO', operation: 'createPet', status: 401, errorCode: 'UNAUTHORIZED' });
    expect(line).not.toHaveProperty('keyId');
    expectNothingLeaks(wrongKey);
    expect(lines[0]).not.toContain('not-the-key');
  });

  it('writes one ERROR line for a 503, whose body and header carry the request id', async () => {
    capture();
    const unreadable: ApiKeyStore = { keyDigests: () => Promise.reject(new Error('parameter store unreachable')) };
    const event = apiEvent('POST', '/pets', { body: { name: SECRET_NAME, categoryId: 1 } });
    const res = await call(createPetHandler({ ...service, keys: unreadable }), event);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      message: expect.any(String),
      status: 503,
      requestId: event.requestContext.requestId,
    });
    expect(res.headers['x-request-id']).toBe(event.requestContext.requestId);
    expect(lines).toHaveLength(1);
    expect(parsed()[0]).toMatchObject({
      level: 'ERROR',
      operation: 'createPet',
      status: 503,
      errorCode: 'SERVICE_UNAVAILABLE',
      requestId: event.requestContext.requestId,
    });
    expect(parsed()[0]).not.toHaveProperty('keyId');
    expectNothingLeaks(`Bearer ${TEST_API_KEY}`);
  });
});
