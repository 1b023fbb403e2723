/**
 * The client's retry rules against the real local API: faults on the wire between the API and
 * DynamoDB (tools/stage-emulator/src/alarms/faultProxy.ts) and at the gateway (./gatewayProxy.ts, answering as API
 * Gateway does). One createPet call stores exactly one pet however its attempts fare, every attempt
 * carries the same Idempotency-Key, and what is not transient is thrown at once.
 */
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  petStoreClient,
  PetStoreError,
  PetStoreNetworkError,
  retryAfterMs,
  retryDelayMs,
  DEFAULT_RETRY,
  type ClientOptions,
  type RetryOptions,
} from '../../client/src/index.ts';
import { startLocalApi, type LocalApi } from '../../local/server.ts';
import { startEmbeddedStore, type EmbeddedStore } from '../../local/embeddedStore.ts';
import { startFaultProxy, type FaultProxy } from '@petstore/stage-emulator/faultProxy';
import { validatingFetch } from '../support/http.ts';
import { startGatewayProxy, type GatewayProxy } from './gatewayProxy.ts';

const KEY = 'client-retries-test-key';
const PETS_TABLE = 'client-retries-pets';
let store: EmbeddedStore;
let storeFaults: FaultProxy;
let api: LocalApi;
let gateway: GatewayProxy;

beforeAll(async () => {
  store = await startEmbeddedStore();
  storeFaults = await startFaultProxy(store.endpoint);
  Object.assign(process.env, {
    DYNAMODB_ENDPOINT: storeFaults.endpoint,
    PETSTORE_API_KEYS: KEY,
    PETSTORE_CURSOR_SECRET: 'client-retries-test-cursor-secret',
    TABLE_NAME: PETS_TABLE,
    CONTROL_TABLE_NAME: 'client-retries-control',
    // A store budget of 1 s, not 2.5 s: a lost or hung store answer costs its wait at less than half the time.
    STORE_BUDGET_MS: '1000',
    // An attempt outlasts the request's store budget, so a lost or hung store answer reaches the
    // client as the 503 it is, instead of being absorbed by the SDK's own retry.
    DYNAMODB_ATTEMPT_TIMEOUT_MS: '5000',
  });
  api = await startLocalApi({ port: 0, quiet: true });
  gateway = await startGatewayProxy(api.url);
});
afterAll(async () => {
  await gateway?.close();
  await api?.close();
  await storeFaults?.close();
  await store?.close();
});
beforeEach(() => {
  storeFaults.fault = undefined;
  storeFaults.injected = 0;
  storeFaults.observe = undefined;
  gateway.faults = [];
  gateway.seen = [];
});

const client = (retry?: RetryOptions, apiKey = KEY) =>
  petStoreClient({ baseUrl: gateway.url, apiKey, fetch: validatingFetch, ...(retry ? { retry } : {}) });

/** The pets table as stored, read from dynalite itself (not through either proxy). */
async function storedNamed(name: string): Promise<number[]> {
  const dynamo = new DynamoDBClient({
    endpoint: store.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const { Items = [] } = await dynamo.send(new ScanCommand({ TableName: PETS_TABLE }));
  dynamo.destroy();
  return Items.filter((item) => item.name?.S === name).map((item) => Number(item.id?.N));
}

const posts = () => gateway.seen.filter((request) => request.method === 'POST');

describe('createPet through store faults: one call, exactly one pet', () => {
  it('when the answer to the pet write is lost on the wire (the write landed)', async () => {
    storeFaults.fault = { kind: 'dropAnswer', operations: ['PutItem'], bodyIncludes: PETS_TABLE, times: 1 };
    const name = `dropped-${randomUUID()}`;
    const created = await client().createPet({ name, categoryId: 1, status: 'available' });
    expect(storeFaults.injected).toBe(1);
    expect(await storedNamed(name)).toEqual([created.pet.id]);
    // The API could not tell whether the write landed (503); the retry with the same key answered the pet.
    expect(posts().map((request) => request.status)).toEqual([503, 201]);
    expect(posts().map((request) => request.idempotencyKey)).toEqual([created.idempotencyKey, created.idempotencyKey]);
  });

  it('when the pet write is throttled twice (the service retries it itself)', async () => {
    storeFaults.fault = { kind: 'throughput', operations: ['PutItem'], bodyIncludes: PETS_TABLE, times: 2 };
    const name = `throttled-${randomUUID()}`;
    const created = await client().createPet({ name, categoryId: 1 });
    expect(storeFaults.injected).toBe(2);
    expect(await storedNamed(name)).toEqual([created.pet.id]);
    expect(new Set(posts().map((request) => request.idempotencyKey))).toEqual(new Set([created.idempotencyKey]));
  });

  it("when the pet write is throttled past the service's own retries (the client retries the 503)", async () => {
    storeFaults.fault = { kind: 'throughput', operations: ['PutItem'], bodyIncludes: PETS_TABLE, times: 4 };
    const name = `throttled-more-${randomUUID()}`;
    const created = await client().createPet({ name, categoryId: 1 });
    expect(await storedNamed(name)).toEqual([created.pet.id]);
    expect(posts()[0]?.status).toBe(503);
    expect(posts().at(-1)?.status).toBe(201);
    expect(new Set(posts().map((request) => request.idempotencyKey))).toEqual(new Set([created.idempotencyKey]));
  });

  it('when an earlier request with the same key is still running: 409 IDEMPOTENCY_IN_PROGRESS is retried until it can answer', async () => {
    // The first request's pet write hangs until its store budget ends (a 503); meanwhile the client's create waits.
    storeFaults.fault = { kind: 'hang', operations: ['PutItem'], bodyIncludes: PETS_TABLE, times: 1 };
    const name = `in-progress-${randomUUID()}`;
    const idempotencyKey = randomUUID();
    const body = { name, categoryId: 1 };
    const hung = new Promise<void>((resolve) => {
      storeFaults.observe = (operation, request) => {
        if (operation === 'PutItem' && request.includes(PETS_TABLE)) resolve();
      };
    });
    const first = fetch(`${api.url}/pets`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${KEY}`,
        'Content-Type': 'application/json',
        'Idempotency-Key': idempotencyKey,
      },
      body: JSON.stringify(body),
    });
    await hung;
    expect(storeFaults.injected).toBe(1);

    const created = await client().createPet(body, { idempotencyKey });
    expect((await first).status).toBe(503);
    expect(posts()[0]?.status).toBe(409);
    expect(posts().at(-1)?.status).toBe(201);
    expect(posts().every((request) => request.idempotencyKey === idempotencyKey)).toBe(true);
    expect(await storedNamed(name)).toEqual([created.pet.id]);
  });
});

describe('answers at the gateway', () => {
  it('429 is retried after Retry-After, with the same key, and one pet is stored', async () => {
    gateway.faults = [{ kind: 'answer', status: 429, code: 'TOO_MANY_REQUESTS', retryAfter: '1', times: 1 }];
    const name = `gateway-429-${randomUUID()}`;
    const created = await client().createPet({ name, categoryId: 1 });
    const [throttled, retried] = posts();
    expect([throttled?.status, retried?.status]).toEqual([429, 201]);
    expect(retried!.at - throttled!.at).toBeGreaterThanOrEqual(1_000); // never before Retry-After
    expect([throttled?.idempotencyKey, retried?.idempotencyKey]).toEqual([
      created.idempotencyKey,
      created.idempotencyKey,
    ]);
    expect(await storedNamed(name)).toEqual([created.pet.id]);
  });

  it('a dropped connection, a 503 and a 504 are retried for the reads too', async () => {
    const { pet } = await client().createPet({ name: `read-${randomUUID()}`, categoryId: 2, status: 'sold' });
    gateway.seen = [];
    gateway.faults = [{ kind: 'reset', times: 1 }];
    expect((await client().getPet(pet.id)).pet).toEqual(pet);
    expect(gateway.seen.map((request) => request.answeredBy)).toEqual(['reset', 'api']);

    gateway.seen = [];
    gateway.faults = [
      {
        kind: 'answer',
        status: 503,
        code: 'SERVICE_UNAVAILABLE',
        retryAfter: '0',
        headers: { 'X-Request-Id': 'r-503' },
        body: { requestId: 'r-503' },
        times: 1,
      },
      { kind: 'answer', status: 504, code: 'GATEWAY_TIMEOUT', times: 1 },
    ];
    const page = await client().listPets({ status: 'sold' });
    expect(page.pets).toContainEqual(pet);
    expect(gateway.seen.map((request) => request.status)).toEqual([503, 504, 200]);
  });

  it('gives up at the budget with the last answer as a PetStoreError, its request id from x-amzn-RequestId', async () => {
    gateway.faults = [{ kind: 'answer', status: 429, code: 'TOO_MANY_REQUESTS', retryAfter: '1', times: 100 }];
    const error = await client({ budgetMs: 1_500 })
      .listPets()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PetStoreError);
    const last = gateway.seen.at(-1)!;
    expect(error).toMatchObject({
      status: 429,
      code: 'TOO_MANY_REQUESTS',
      message: expect.stringContaining('injected TOO_MANY_REQUESTS'),
      requestId: last.gatewayRequestId,
    });
    expect(gateway.seen.length).toBeGreaterThanOrEqual(1);
    expect(gateway.seen.length).toBeLessThanOrEqual(2); // a 1 s Retry-After leaves room for one retry in 1.5 s
  });

  it('does not wait for a Retry-After that ends past the budget; the request id comes from a 5xx body first', async () => {
    gateway.faults = [
      {
        kind: 'answer',
        status: 503,
        code: 'SERVICE_UNAVAILABLE',
        retryAfter: '5',
        headers: { 'X-Request-Id': 'from-header' },
        body: { requestId: 'from-body' },
        times: 1,
      },
    ];
    const error = await client({ budgetMs: 2_000 })
      .listPets()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PetStoreError);
    expect(error).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', requestId: 'from-body' });
    expect(gateway.seen).toHaveLength(1);
  });
});

describe('never retried', () => {
  it.each([
    ['400 VALIDATION_FAILED', (c: ReturnType<typeof client>) => c.listPets({ limit: 0 }), 400, 'VALIDATION_FAILED'],
    ['404 NOT_FOUND', (c: ReturnType<typeof client>) => c.getPet(Number.MAX_SAFE_INTEGER), 404, 'NOT_FOUND'],
    [
      '401 UNAUTHORIZED',
      () => client(undefined, 'not-a-key').createPet({ name: 'Nobody', categoryId: 1 }),
      401,
      'UNAUTHORIZED',
    ],
  ] as const)(
    "%s: one request, the typed error, its request id from X-Request-Id (a refused key's from the gateway's x-amzn-RequestId)",
    async (_, call, status, code) => {
      const error = (await call(client()).catch((e: unknown) => e)) as PetStoreError;
      expect(error).toBeInstanceOf(PetStoreError);
      expect(error).toMatchObject({
        status,
        code,
        message: expect.any(String),
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
      const idHeader = status === 401 ? 'x-amzn-requestid' : 'x-request-id';
      if (status === 401) expect(error.headers.get('x-request-id')).toBeNull();
      expect(error.requestId).toBe(error.headers.get(idHeader));
      expect(gateway.seen).toHaveLength(1);
    },
  );

  it('422 IDEMPOTENCY_KEY_REUSED: one request, and the error carries the key', async () => {
    const idempotencyKey = randomUUID();
    await client().createPet({ name: 'First', categoryId: 1 }, { idempotencyKey });
    gateway.seen = [];
    const error = (await client()
      .createPet({ name: 'Second', categoryId: 1 }, { idempotencyKey })
      .catch((e: unknown) => e)) as PetStoreError;
    expect(error).toMatchObject({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED', idempotencyKey });
    expect(gateway.seen).toHaveLength(1);
  });

  it('500 INTERNAL and 502 BAD_GATEWAY: one request each', async () => {
    const internal = {
      kind: 'answer',
      status: 500,
      code: 'INTERNAL',
      headers: { 'X-Request-Id': 'r-500' },
      body: { requestId: 'r-500' },
      times: 1,
    } as const;
    gateway.faults = [{ ...internal }, { kind: 'answer', status: 502, code: 'BAD_GATEWAY', times: 1 }];
    await expect(client().listPets()).rejects.toMatchObject({ status: 500, code: 'INTERNAL', requestId: 'r-500' });
    await expect(client().listPets()).rejects.toMatchObject({ status: 502, code: 'BAD_GATEWAY' });
    expect(gateway.seen).toHaveLength(2);
  });

  it("the caller's own abort", async () => {
    gateway.faults = [
      {
        kind: 'answer',
        status: 503,
        code: 'SERVICE_UNAVAILABLE',
        retryAfter: '1',
        headers: { 'X-Request-Id': 'r' },
        times: 100,
      },
    ];
    const controller = new AbortController();
    // The caller stops once the first attempt has been answered (the client is then reading or waiting).
    const stopsAfterAnAnswer = async (request: Request) => {
      const answer = await validatingFetch(request);
      controller.abort(new Error('stopped by the caller'));
      return answer;
    };
    const call = petStoreClient({ baseUrl: gateway.url, apiKey: KEY, fetch: stopsAfterAnAnswer }).listPets(
      {},
      { signal: controller.signal },
    );
    await expect(call).rejects.toThrow('stopped by the caller');
    expect(gateway.seen).toHaveLength(1);
  });
});

describe('no answer at all', () => {
  it('is retried until the budget, then thrown naming its cause', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));

    const unreachable = petStoreClient({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      apiKey: KEY,
      retry: { budgetMs: 400 },
    });
    const error = (await unreachable
      .createPet({ name: 'Lost', categoryId: 1 })
      .catch((e: unknown) => e)) as PetStoreNetworkError;
    expect(error).toBeInstanceOf(PetStoreNetworkError);
    expect(error.message).toMatch(
      new RegExp(`^fetch failed: ECONNREFUSED 127\\.0\\.0\\.1:${port} \\(\\d+ attempts? in \\d+\\.\\d s\\)$`),
    );
    expect(error.attempts).toBeGreaterThan(1);
    expect(error.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('an attempt still hanging at the budget is aborted', async () => {
    storeFaults.fault = { kind: 'hang', operations: ['GetItem'], bodyIncludes: PETS_TABLE };
    const error = (await client({ budgetMs: 500 })
      .getPet(1)
      .catch((e: unknown) => e)) as PetStoreNetworkError;
    expect(error).toBeInstanceOf(PetStoreNetworkError);
    expect(error.message).toMatch(/^no answer within the retry budget of 500 ms \(1 attempt in 0\.\d s\)$/);
  });
});

describe('the wait between attempts', () => {
  const policy = DEFAULT_RETRY;

  it('is Retry-After plus a random share of a ceiling that doubles up to maxDelayMs', () => {
    expect(retryDelayMs(1, undefined, policy, () => 0)).toBe(0);
    expect(retryDelayMs(1, 1_000, policy, () => 0)).toBe(1_000);
    expect(retryDelayMs(1, undefined, policy, () => 0.999)).toBe(99);
    expect(retryDelayMs(3, undefined, policy, () => 0.999)).toBe(399);
    expect(retryDelayMs(30, undefined, policy, () => 0.999)).toBe(1_998);
    expect(retryDelayMs(30, 1_000, policy, () => 0.5)).toBe(2_000);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('1')).toBe(1_000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:02 GMT', Date.parse('2026-01-01T00:00:00Z'))).toBe(2_000);
  });

  it('refuses retry options that make no sense when the client is made', () => {
    expect(() => client({ budgetMs: 0 })).toThrow(RangeError);
    expect(() => client({ maxDelayMs: -1 })).toThrow(/retry.maxDelayMs must be a non-negative number/);
  });

  it('refuses a baseUrl that is not an http(s) URL when the client is made, rather than retrying it', () => {
    for (const baseUrl of [
      'localhost:3000/v1',
      '127.0.0.1:3000/v1',
      'ftp://example.com/v1',
      '',
      '/v1',
      undefined,
      null,
    ]) {
      // A missing one too (`process.env.PETSTORE_URL` unset in plain JavaScript): one line, not a TypeError of ours.
      const made = () => petStoreClient({ baseUrl } as unknown as ClientOptions);
      expect(made, String(baseUrl)).toThrow(/^baseUrl must be an http\(s\) URL such as https:\/\/\S+, not \S+$/);
    }
    expect(() => petStoreClient({ baseUrl: 'http://127.0.0.1:3000/v1' })).not.toThrow();
  });
});
