/**
 * The idempotency records' mechanics, on dynalite, driven through `IdempotentCreates` itself: what
 * a request does with a record it finds, each branch forced by setting the record up by hand (the
 * handler-level behaviour is in test/functions/idempotency.test.ts).
 */
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { digestKey } from '../../../lib/domain/apiKeys.ts';
import type { NewPet } from '../../../lib/domain/schemas.ts';
import { withinDeadline, type StoreTable } from '../../../lib/store/dynamo.ts';
import {
  IdempotentCreates,
  RECORD_TTL_SECONDS,
  WAIT_FOR_CONCURRENT_MS,
  bodyHashOf,
  recordKey,
} from '../../../lib/store/idempotency.ts';
import { getPet } from '../../../lib/store/petReads.ts';
import { putPet } from '../../../lib/store/petWrites.ts';
import { useFreshService } from '../../support/store.ts';

const fresh = useFreshService();

const caller = digestKey('caller-key-0123456789');
const rex: NewPet = { name: 'Rex', categoryId: 7, status: 'available' };
const TOKEN = 'the-records-token';
const pk = (key: string) => recordKey(caller, key);

const record = async (key: string) =>
  (
    await fresh.service.control.documents.send(
      new GetCommand({ TableName: fresh.env.CONTROL_TABLE_NAME, Key: { pk: pk(key), sk: 'record' } }),
    )
  ).Item;

/** A record as a request that claimed `key` leaves it while in progress. */
const putRecord = (key: string, fields: Record<string, unknown>) =>
  fresh.service.control.documents.send(
    new PutCommand({
      TableName: fresh.env.CONTROL_TABLE_NAME,
      Item: {
        pk: pk(key),
        sk: 'record',
        state: 'in_progress',
        bodyHash: bodyHashOf(rex),
        token: TOKEN,
        petId: 1001,
        leaseUntil: Date.now() - 1,
        expiresAt: Math.floor(Date.now() / 1000) + 3600,
        ...fields,
      },
    }),
  );

const setRecord = (key: string, expression: string, values: Record<string, unknown>, names?: Record<string, string>) =>
  fresh.service.control.documents.send(
    new UpdateCommand({
      TableName: fresh.env.CONTROL_TABLE_NAME,
      Key: { pk: pk(key), sk: 'record' },
      UpdateExpression: expression,
      ExpressionAttributeValues: values,
      ...(names ? { ExpressionAttributeNames: names } : {}),
    }),
  );

const creates = (newId: () => number = () => 777) =>
  new IdempotentCreates(fresh.service.control, fresh.service.pets, newId);

/** `creates` within a request whose deadline is `deadline` (epoch ms), as the pipeline scopes the tables. */
const createsWithin = (deadline: number, newId: () => number = () => 777) =>
  new IdempotentCreates(
    withinDeadline(fresh.service.control, deadline),
    withinDeadline(fresh.service.pets, deadline),
    newId,
  );

describe('a fresh key', () => {
  it('is remembered 24 hours', () => {
    expect(RECORD_TTL_SECONDS).toBe(86_400);
  });

  it('claims a record with its own token and id, a lease and a 24-hour expiry, then completes it with the pet', async () => {
    const before = Date.now();
    const { pet, replayed } = await creates(() => 4242).create(caller, 'fresh', rex);
    expect({ pet, replayed }).toEqual({ pet: { ...rex, id: 4242 }, replayed: false });
    const stored = await record('fresh');
    expect(stored).toMatchObject({
      state: 'completed',
      bodyHash: bodyHashOf(rex),
      petId: 4242,
      pet: { ...rex, id: 4242 },
    });
    expect(stored?.token).toMatch(/^[0-9a-f-]{36}$/);
    // Without a request deadline the lease is 5 s.
    expect(stored?.leaseUntil).toBeGreaterThanOrEqual(before + 5_000);
    expect(stored?.leaseUntil).toBeLessThanOrEqual(Date.now() + 5_000);
    expect(stored?.expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) + RECORD_TTL_SECONDS);
  });

  it('leases until the request deadline when there is one', async () => {
    const deadline = Date.now() + 2_000;
    await createsWithin(deadline, () => 4343).create(caller, 'bounded', rex);
    const stored = await record('bounded');
    expect(stored?.leaseUntil).toBe(deadline);
  });
});

describe('a record in progress with a live lease', () => {
  it('is waited for: when it completes within the wait, its pet is the answer, replayed', async () => {
    await putRecord('live', { leaseUntil: Date.now() + 60_000, petId: 5151 });
    await putPet(fresh.service.pets, { ...rex, id: 5151 }, TOKEN);
    // The other request completes while this one waits: just before its fourth read of the record (its third poll).
    let reads = 0;
    const control = intercepted(fresh.service.control, async (command) => {
      if (command.constructor.name === 'GetCommand' && ++reads === 4)
        await setRecord(
          'live',
          'SET #state = :done, pet = :pet',
          { ':done': 'completed', ':pet': { ...rex, id: 5151 } },
          { '#state': 'state' },
        );
      return undefined;
    });
    const started = Date.now();
    expect(await new IdempotentCreates(control, fresh.service.pets, () => 777).create(caller, 'live', rex)).toEqual({
      pet: { ...rex, id: 5151 },
      replayed: true,
    });
    expect(Date.now() - started).toBeLessThan(WAIT_FOR_CONCURRENT_MS);
    // Polls every 50 ms and stops at the completion, not at the end of the wait (20 polls).
    expect(reads).toBe(4);
  });

  it('is waited for no longer than the request deadline allows, and answered 409 (not a store timeout)', async () => {
    await putRecord('short', { leaseUntil: Date.now() + 60_000 });
    await expect(createsWithin(Date.now() + 700).create(caller, 'short', rex)).rejects.toMatchObject({
      code: 'IDEMPOTENCY_IN_PROGRESS',
    });
  });

  it('is waited for about a second, then answered 409', async () => {
    await putRecord('held', { leaseUntil: Date.now() + 60_000 });
    const started = Date.now();
    await expect(creates().create(caller, 'held', rex)).rejects.toMatchObject({ code: 'IDEMPOTENCY_IN_PROGRESS' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(WAIT_FOR_CONCURRENT_MS - 100);
    expect(await getPet(fresh.service.pets, 1001)).toBeUndefined();
  });

  it('is taken over when its lease lapses during the wait', async () => {
    await putRecord('lapsing', { leaseUntil: Date.now() + 300, petId: 6161 });
    expect(await creates().create(caller, 'lapsing', rex)).toEqual({ pet: { ...rex, id: 6161 }, replayed: false });
    expect(await record('lapsing')).toMatchObject({ state: 'completed', petId: 6161 });
  });
});

describe('a record whose id another create holds', () => {
  it('moves to a new id, conditional on the one it had', async () => {
    await putRecord('taken', { petId: 7070 });
    await putPet(fresh.service.pets, { ...rex, id: 7070 }, 'another-create');
    expect(await creates(() => 7071).create(caller, 'taken', rex)).toEqual({
      pet: { ...rex, id: 7071 },
      replayed: false,
    });
    expect(await record('taken')).toMatchObject({ state: 'completed', petId: 7071, token: TOKEN });
  });

  it('follows the id another writer of the key moved it to first', async () => {
    await putRecord('raced', { petId: 8080 });
    await putPet(fresh.service.pets, { ...rex, id: 8080 }, 'another-create');
    // Just before this request's move lands, another writer of the key moves the record to 8082.
    const control = beforeMove(() => setRecord('raced', 'SET petId = :moved', { ':moved': 8082 }));
    const answer = await new IdempotentCreates(control, fresh.service.pets, () => 8081).create(caller, 'raced', rex);
    expect(answer).toEqual({ pet: { ...rex, id: 8082 }, replayed: false });
    expect(await getPet(fresh.service.pets, 8081)).toBeUndefined();
    expect(await record('raced')).toMatchObject({ state: 'completed', petId: 8082 });
  });

  it('answers 409 when the record vanished while this request moved it', async () => {
    await putRecord('gone', { petId: 9595 });
    await putPet(fresh.service.pets, { ...rex, id: 9595 }, 'another-create');
    const control = beforeMove(() => deleteRecord('gone'));
    await expect(
      new IdempotentCreates(control, fresh.service.pets, () => 9596).create(caller, 'gone', rex),
    ).rejects.toMatchObject({
      code: 'IDEMPOTENCY_IN_PROGRESS',
    });
  });

  it('answers 409 when the record became another claim meanwhile (expired and claimed again)', async () => {
    await putRecord('reclaimed', { petId: 9090 });
    await putPet(fresh.service.pets, { ...rex, id: 9090 }, 'another-create');
    const control = beforeMove(() =>
      setRecord('reclaimed', 'SET #token = :other', { ':other': 'a-new-claims-token' }, { '#token': 'token' }),
    );
    await expect(
      new IdempotentCreates(control, fresh.service.pets, () => 9091).create(caller, 'reclaimed', rex),
    ).rejects.toMatchObject({
      code: 'IDEMPOTENCY_IN_PROGRESS',
    });
    expect(await getPet(fresh.service.pets, 9091)).toBeUndefined();
  });
});

type Command = {
  constructor: { name: string };
  input: { UpdateExpression?: string; ConditionExpression?: string; TableName?: string };
};

/**
 * `table` with `hook` run before each command it sends: another writer of the same key landing
 * first, a fault, a count. What the hook answers (other than undefined) is the command's answer.
 */
function intercepted(table: StoreTable, hook: (command: Command) => Promise<unknown> | undefined): StoreTable {
  const { documents, tableName } = table;
  const send = async (command: Command, options?: unknown) =>
    (await hook(command)) ??
    (documents.send as (command: unknown, options?: unknown) => Promise<unknown>)(command, options);
  return { tableName, documents: { send } as unknown as StoreTable['documents'] };
}

/** The control table, with `concurrently` run once, just before the first move of a record's id is sent. */
function beforeMove(concurrently: () => Promise<unknown>): StoreTable {
  let done = false;
  return intercepted(fresh.service.control, async (command) => {
    if (done || command.input.UpdateExpression !== 'SET petId = :next') return undefined;
    done = true;
    await concurrently();
    return undefined;
  });
}

/** The control table, with every update whose expression is `expression` failing as a store fault would. */
function failing(expression: string): StoreTable {
  return intercepted(fresh.service.control, async (command) => {
    if (command.input.UpdateExpression === expression)
      throw Object.assign(new Error('injected'), { name: 'InternalServerError' });
    return undefined;
  });
}

const conditionFailed = () =>
  Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException' });
const deleteRecord = (key: string) =>
  fresh.service.control.documents.send(
    new DeleteCommand({ TableName: fresh.env.CONTROL_TABLE_NAME, Key: { pk: pk(key), sk: 'record' } }),
  );

describe('the claim rounds', () => {
  it('give up with 409 after three rounds in which another request took the record over first', async () => {
    await putRecord('contended', {});
    let takeovers = 0;
    const control = intercepted(fresh.service.control, async (command) => {
      if (command.input.UpdateExpression !== 'SET leaseUntil = :lease') return undefined;
      takeovers++;
      throw conditionFailed();
    });
    await expect(
      new IdempotentCreates(control, fresh.service.pets, () => 1).create(caller, 'contended', rex),
    ).rejects.toMatchObject({
      code: 'IDEMPOTENCY_IN_PROGRESS',
    });
    expect(takeovers).toBe(3);
  });

  it('claim again when the record vanished between the refused claim and its read (deleted by TTL)', async () => {
    await putRecord('vanishing', { leaseUntil: Date.now() + 60_000 });
    let reads = 0;
    const control = intercepted(fresh.service.control, async (command) => {
      if (command.constructor.name === 'GetCommand' && reads++ === 0) await deleteRecord('vanishing');
      return undefined;
    });
    expect(
      await new IdempotentCreates(control, fresh.service.pets, () => 2020).create(caller, 'vanishing', rex),
    ).toEqual({
      pet: { ...rex, id: 2020 },
      replayed: false,
    });
  });

  it('answer a claim refused by a store fault with that fault (503), never as taken', async () => {
    const control = intercepted(fresh.service.control, async (command) => {
      if (command.constructor.name === 'PutCommand')
        throw Object.assign(new Error('injected'), { name: 'InternalServerError' });
      return undefined;
    });
    await expect(
      new IdempotentCreates(control, fresh.service.pets, () => 2121).create(caller, 'faulted', rex),
    ).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
    });
  });
});

describe('store calls', () => {
  it('a fresh key reads no pet before writing it, and a lapsed record is not polled', async () => {
    const pets = { ...fresh.service.pets, ...countingReads(fresh.service.pets) };
    await new IdempotentCreates(fresh.service.control, pets.table, () => 2222).create(caller, 'fresh-reads', rex);
    expect(pets.reads()).toBe(0);

    await putRecord('lapsed-reads', { petId: 2323 });
    const control = countingReads(fresh.service.control);
    await new IdempotentCreates(control.table, fresh.service.pets, () => 2424).create(caller, 'lapsed-reads', rex);
    expect(control.reads()).toBe(1);
  });
});

/** `table` counting the GetItem calls sent through it. */
function countingReads<T extends StoreTable>(table: T): { table: T; reads: () => number } {
  let reads = 0;
  const counted = intercepted(table, (command) => {
    if (command.constructor.name === 'GetCommand') reads++;
    return undefined;
  });
  return { table: { ...table, documents: counted.documents }, reads: () => reads };
}

describe('a failed attempt', () => {
  it('releases its lease, so that a retry need not wait for it', async () => {
    // The pet's id is another create's and no new id is free: the attempt fails after its claim.
    const ids = Array.from({ length: 9 }, (_, i) => 10_000 + i);
    for (const id of ids) await putPet(fresh.service.pets, { ...rex, id }, `other-${id}`);
    let next = 0;
    await expect(creates(() => ids[next++] ?? 10_000).create(caller, 'failing', rex)).rejects.toThrow(/No free pet id/);
    expect(await record('failing')).toMatchObject({ state: 'in_progress', leaseUntil: 0 });
    expect(await creates(() => 10_100).create(caller, 'failing', rex)).toEqual({
      pet: { ...rex, id: 10_100 },
      replayed: false,
    });
  });

  it('releases its lease within a request whose deadline has not passed', async () => {
    const ids = Array.from({ length: 9 }, (_, i) => 12_000 + i);
    for (const id of ids) await putPet(fresh.service.pets, { ...rex, id }, `other-${id}`);
    let next = 0;
    await expect(
      createsWithin(Date.now() + 20_000, () => ids[next++] ?? 12_000).create(caller, 'within', rex),
    ).rejects.toThrow(/No free pet id/);
    expect(await record('within')).toMatchObject({ state: 'in_progress', leaseUntil: 0 });
  });

  it('draws up to 8 ids for a key before it fails', async () => {
    const ids = Array.from({ length: 7 }, (_, i) => 13_000 + i);
    for (const id of ids) await putPet(fresh.service.pets, { ...rex, id }, `other-${id}`);
    let next = 0;
    const answer = await creates(() => ids[next++] ?? 13_100).create(caller, 'eighth', rex);
    expect(answer).toEqual({ pet: { ...rex, id: 13_100 }, replayed: false });
  });

  it('keeps its lease when the request deadline has passed (no store call after it)', async () => {
    const ids = Array.from({ length: 9 }, (_, i) => 11_000 + i);
    for (const id of ids) await putPet(fresh.service.pets, { ...rex, id }, `other-${id}`);
    let next = 0;
    const slowIds = () => {
      const id = ids[next++] ?? 11_000;
      // The last draw happens after the deadline: the release is skipped.
      if (next === 8) {
        const until = Date.now() + 300;
        while (Date.now() < until);
      }
      return id;
    };
    await expect(createsWithin(Date.now() + 250, slowIds).create(caller, 'late', rex)).rejects.toBeDefined();
    const stored = await record('late');
    expect(stored?.state).toBe('in_progress');
    expect(stored?.leaseUntil).not.toBe(0);
  });
});

describe('marking the record completed', () => {
  it('does not fail the create when it fails: the pet is stored, and a retry finds it', async () => {
    const control = failing('SET #state = :completed, pet = :pet');
    expect(
      await new IdempotentCreates(control, fresh.service.pets, () => 1515).create(caller, 'unmarked', rex),
    ).toEqual({
      pet: { ...rex, id: 1515 },
      replayed: false,
    });
    expect(await record('unmarked')).toMatchObject({ state: 'in_progress', petId: 1515 });
    expect(await getPet(fresh.service.pets, 1515)).toEqual({ ...rex, id: 1515 });
  });
});

describe('the body a key was first used with', () => {
  it.each<[string, NewPet]>([
    ['another name', { ...rex, name: 'Max' }],
    ['another category', { ...rex, categoryId: 8 }],
    ['another status', { ...rex, status: 'sold' }],
    ['no status', { name: rex.name, categoryId: rex.categoryId }],
  ])("is another body with %s: 422, and the first pet stays the key's", async (_case, other) => {
    await creates(() => 1616).create(caller, 'first-body', rex);
    await expect(creates(() => 1617).create(caller, 'first-body', other)).rejects.toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
      message: 'This Idempotency-Key was already used with a different body; use a new key for a new pet.',
    });
    expect(await getPet(fresh.service.pets, 1617)).toBeUndefined();
  });

  it('answers 409 in words that say to retry, with Retry-After', async () => {
    await putRecord('busy', { leaseUntil: Date.now() + 60_000 });
    await expect(creates().create(caller, 'busy', rex)).rejects.toMatchObject({
      code: 'IDEMPOTENCY_IN_PROGRESS',
      message: 'A request with this Idempotency-Key is still in progress; retry shortly.',
      headers: { 'Retry-After': '1' },
    });
  });
});

describe('a record found completed', () => {
  it('answers its pet, replayed, writing nothing', async () => {
    await putPet(fresh.service.pets, { ...rex, id: 1212 }, TOKEN);
    await putRecord('done', { state: 'completed', petId: 1212, pet: { ...rex, id: 1212 } });
    expect(await creates(() => 3).create(caller, 'done', rex)).toEqual({ pet: { ...rex, id: 1212 }, replayed: true });
    expect(await getPet(fresh.service.pets, 3)).toBeUndefined();
  });

  it("answers 410 GONE once its pet has been removed (or is another create's), writing nothing", async () => {
    await putRecord('removed', { state: 'completed', petId: 1515, pet: { ...rex, id: 1515 } });
    await expect(creates(() => 4).create(caller, 'removed', rex)).rejects.toMatchObject({ code: 'GONE', status: 410 });
    await putPet(fresh.service.pets, { ...rex, id: 1515 }, 'another-create');
    await expect(creates(() => 4).create(caller, 'removed', rex)).rejects.toMatchObject({ code: 'GONE' });
    expect(await getPet(fresh.service.pets, 4)).toBeUndefined();
  });

  it('is ignored once expired, and the key creates anew', async () => {
    await putRecord('stale', {
      state: 'completed',
      petId: 1313,
      pet: { ...rex, id: 1313 },
      expiresAt: Math.floor(Date.now() / 1000) - 1,
    });
    expect(await creates(() => 1414).create(caller, 'stale', rex)).toEqual({
      pet: { ...rex, id: 1414 },
      replayed: false,
    });
  });
});
