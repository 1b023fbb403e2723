/**
 * Faults injected on the wire between the real DynamoDB client and dynalite (tools/stage-emulator/src/alarms/faultProxy.ts):
 * for each, the status, Retry-After, the time to answer and what the table holds afterwards.
 * The time bound is a correctness bound on a hang (the store budget is 2.5 s), with slack for a
 * loaded machine; it is not a speed figure.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { createHandler as createPetHandler } from '../../functions/createPet.ts';
import { createHandler as getPetHandler } from '../../functions/getPet.ts';
import { createHandler as listPetsHandler } from '../../functions/listPets.ts';
import { ANSWER_MARGIN_MS, STORE_BUDGET_MS, storeBudget } from '../../lib/store/deadline.ts';
import { localContext } from '@petstore/local-kit/proxyEvent';
import type { Pet } from '../../lib/domain/schemas.ts';
import { toPet } from '../../lib/store/petReads.ts';
import { createDocumentClient, isWriteOutcomeUnknown } from '../../lib/store/dynamo.ts';
import { dependenciesFromEnvironment, type Environment, type Dependencies } from '../../lib/service.ts';
import { apiEvent, call } from '../support/events.ts';
import type { FaultKind } from '@petstore/stage-emulator/faultProxy';
import { useFaultProxy } from '../support/faultProxy.ts';
import { freshEnvironment, useEmbeddedStore } from '../support/store.ts';

/** Budget plus slack for two busy cores: a hang must never hold a request near the Lambda timeout. */
const ANSWER_BOUND_MS = STORE_BUDGET_MS + 2_000;
/**
 * The Lambda time left given to the invocations of each fault's tests: a store budget of 400 ms, not
 * 2.5 s, so a fault costs its wait once per test at a sixth of the time (every answer under a fault
 * is a 503, whenever the budget ends). The whole 2.5 s budget is held to under "the store budget" below.
 */
const SHORT_INVOCATION_MS = ANSWER_MARGIN_MS + 400;

const endpoint = useEmbeddedStore();
const proxy = useFaultProxy(endpoint);
let env: Environment;
let service: Dependencies;

beforeEach(async () => {
  env = await freshEnvironment(proxy().endpoint);
  service = dependenciesFromEnvironment(env);
});

const rex = { name: 'Rex', categoryId: 1 };
const createEvent = (key?: string) =>
  apiEvent('POST', '/pets', { body: rex, headers: key ? { 'Idempotency-Key': key } : {} });

async function timed<T>(work: Promise<T>): Promise<T & { ms: number }> {
  const started = Date.now();
  const result = await work;
  return { ...result, ms: Date.now() - started };
}

/** The stored pets as clients see them (without the shard key and write token). */
async function storedPets(): Promise<Pet[]> {
  const documents = createDocumentClient({ endpoint: endpoint() });
  return ((await documents.send(new ScanCommand({ TableName: env.TABLE_NAME }))).Items ?? []).map(toPet);
}

const UNKNOWN = /may or may not have been stored/;
const GENERIC = /temporarily unavailable/;
/**
 * Throttling is retried with backoff; on a loaded machine the budget can run out while the last
 * attempt is on the wire, and then the create rightly cannot say that nothing was stored.
 */
const GENERIC_OR_UNKNOWN = /temporarily unavailable|may or may not have been stored/;

describe.each<[FaultKind, string, RegExp, number]>([
  // kind, what it stands for, createPet's message, pets stored afterwards
  ['throttle', 'ThrottlingException', GENERIC_OR_UNKNOWN, 0],
  ['throughput', 'ProvisionedThroughputExceededException', GENERIC_OR_UNKNOWN, 0],
  ['error500', '500 InternalServerError from the service', UNKNOWN, 0],
  ['reset', 'a connection reset', UNKNOWN, 0],
  ['hang', 'a hung store', UNKNOWN, 0],
  ['dropAnswer', 'a timeout after the request was sent', UNKNOWN, 1],
])('%s (%s)', (kind, _what, createMessage, storedAfter) => {
  it('answers every operation 503 with Retry-After within the budget; a create says whether it may have been stored', async () => {
    proxy().fault = { kind };
    const [created, listed, fetched] = await Promise.all([
      timed(call(createPetHandler(service), createEvent(), SHORT_INVOCATION_MS)),
      timed(call(listPetsHandler(service), apiEvent('GET', '/pets?status=available'), SHORT_INVOCATION_MS)),
      timed(call(getPetHandler(service), apiEvent('GET', '/pets/12345'), SHORT_INVOCATION_MS)),
    ]);
    for (const res of [created, listed, fetched]) {
      expect(res.status).toBe(503);
      expect(res.body).toEqual({
        code: 'SERVICE_UNAVAILABLE',
        message: expect.any(String),
        status: 503,
        requestId: expect.any(String),
      });
      expect(res.headers['x-request-id']).toBe(res.body.requestId);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.ms).toBeLessThan(ANSWER_BOUND_MS);
    }
    expect(created.body.message).toMatch(createMessage);
    expect(listed.body.message).toMatch(GENERIC);
    expect(proxy().injected).toBeGreaterThan(0);
    proxy().fault = undefined;
    // A write that was sent lands at most once, whatever the SDK retried.
    expect(await storedPets()).toHaveLength(storedAfter);
  });

  it('lets a retry with the same Idempotency-Key get exactly one pet once the fault clears', async () => {
    proxy().fault = { kind };
    const first = await timed(call(createPetHandler(service), createEvent('retry-me'), SHORT_INVOCATION_MS));
    expect(first.status).toBe(503);
    expect(first.ms).toBeLessThan(ANSWER_BOUND_MS);
    proxy().fault = undefined;
    const retry = await call(createPetHandler(service), createEvent('retry-me'));
    expect(retry.status).toBe(201);
    const stored = await storedPets();
    expect(stored).toEqual([{ ...rex, id: retry.body.id }]);
    const again = await call(createPetHandler(service), createEvent('retry-me'));
    expect(again.body).toEqual(retry.body);
  });
});

describe('a write whose answer is lost', () => {
  it('is answered 201 and stored once when the SDK retry finds it already written', async () => {
    proxy().fault = { kind: 'dropAnswer', operations: ['PutItem'], times: 1 };
    const res = await timed(call(createPetHandler(service), createEvent()));
    expect(res.status).toBe(201);
    expect(res.ms).toBeLessThan(ANSWER_BOUND_MS);
    expect(await storedPets()).toEqual([{ ...rex, id: res.body.id }]);
  });

  it('with an Idempotency-Key: the retry answers the pet the lost write stored', async () => {
    // Only the pet's put loses its answer (the idempotency record's put carries no categoryId).
    proxy().fault = { kind: 'dropAnswer', operations: ['PutItem'], bodyIncludes: 'categoryId' };
    const first = await call(createPetHandler(service), createEvent('lost-answer'), SHORT_INVOCATION_MS);
    expect(first).toMatchObject({ status: 503, body: { message: expect.stringMatching(UNKNOWN) } });
    const [written] = await storedPets();
    expect(written).toMatchObject(rex);
    proxy().fault = undefined;
    const retry = await call(createPetHandler(service), createEvent('lost-answer'));
    expect(retry).toMatchObject({ status: 201, body: written });
    expect(retry.headers.location).toBe(`/v1/pets/${String(written?.id)}`);
    // The pet is the lost first attempt's: the answer says it is a replay, though the client never saw the first.
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(await storedPets()).toHaveLength(1);
  });
});

describe('an idempotency claim whose answer is lost', () => {
  it('is found by its own retry as its own (a new key never waits on itself)', async () => {
    // The record's put lands, its answer is lost, and the SDK's retry finds the record: its own.
    proxy().fault = { kind: 'dropAnswer', operations: ['PutItem'], bodyIncludes: 'bodyHash', times: 1 };
    const res = await call(createPetHandler(service), createEvent('brand-new-key'));
    expect(res.status).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(await storedPets()).toEqual([{ ...rex, id: res.body.id }]);
  });
});

describe('the store budget', () => {
  it('is 2.5 s, or the Lambda time left minus the margin when that is less', () => {
    expect(storeBudget(undefined)).toBe(STORE_BUDGET_MS);
    expect(storeBudget(10_000)).toBe(STORE_BUDGET_MS);
    expect(storeBudget(2_000)).toBe(2_000 - ANSWER_MARGIN_MS);
    expect(storeBudget(500)).toBe(0);
  });

  it('answers a hang before a Lambda with little time left times out', async () => {
    proxy().fault = { kind: 'hang' };
    const started = Date.now();
    const result = await getPetHandler(service)(apiEvent('GET', '/pets/1'), localContext('getPet', 1_800));
    expect(result.statusCode).toBe(503);
    expect(Date.now() - started).toBeLessThan(1_800);
  });

  it('holds each of two concurrent requests in one process to its own deadline, whichever started last', async () => {
    proxy().fault = { kind: 'hang' };
    const handler = getPetHandler(service);
    const answered = async (remainingMs: number) => {
      const started = Date.now();
      const result = await handler(apiEvent('GET', '/pets/1'), localContext('getPet', remainingMs));
      return { status: result.statusCode, ms: Date.now() - started };
    };
    // Started in the same tick, the later one with the shorter deadline: neither may take the other's.
    const [long, short] = await Promise.all([answered(10_000), answered(1_800)]);
    expect(short.status).toBe(503);
    expect(short.ms).toBeLessThan(1_800);
    expect(long.status).toBe(503);
    expect(long.ms).toBeGreaterThanOrEqual(STORE_BUDGET_MS - 50);
    expect(long.ms).toBeLessThan(ANSWER_BOUND_MS);
  });
});

describe('which failed writes may have landed', () => {
  const sdkTimeout = (message: string) => Object.assign(new Error(message), { name: 'TimeoutError' });
  it.each<[string, unknown, boolean]>([
    ['an answer timeout', sdkTimeout('a request has exceeded the configured 1000 ms requestTimeout.'), true],
    ['an abort at the deadline', Object.assign(new Error('Request aborted'), { name: 'AbortError' }), true],
    ['a reset', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), true],
    [
      'a connect timeout',
      sdkTimeout(
        'the request socket did not establish a connection with the server within the configured timeout of 1000 ms',
      ),
      false,
    ],
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), false],
    ['throttling', Object.assign(new Error('slow down'), { name: 'ThrottlingException' }), false],
  ])('%s: %s', (_case, error, unknown) => {
    expect(isWriteOutcomeUnknown(error)).toBe(unknown);
  });
});
