/**
 * Idempotent creates: `POST /v1/pets` with an `Idempotency-Key` creates exactly one pet per key
 * and caller, however often it is retried or raced, for 24 hours.
 *
 * A record in the control table (`idempotency#<sha256(caller key digest, idempotency key)>` /
 * `record`) is claimed with a conditional put *before* the pet is written. It holds the request's
 * body hash, a write token (lib/domain/ids.ts), the pet id chosen for it and a lease (the claiming
 * request's deadline, which its control table handle carries). The pet is then put under that id,
 * stamped with the token, and the record marked completed with it. A request that finds the record:
 * - holding its own token: its own claim, whose answer was lost and retried by the SDK: claimed;
 * - with another body hash: 422 IDEMPOTENCY_KEY_REUSED;
 * - completed: the same pet again (replayed), while it is stored; once an operator has removed it, 410 GONE;
 * - in progress with a live lease: waits briefly for it, else 409 IDEMPOTENCY_IN_PROGRESS;
 * - in progress with a lapsed lease (that attempt failed or timed out, maybe after its write):
 *   takes the record over; when the pet is already stored under the recorded id with the
 *   record's token, that earlier attempt's pet is the answer (replayed), else it writes it.
 * The token, not the body, says whose pet an id holds. When the recorded id holds another
 * create's pet (a collision), a new id is drawn and the record moved to it with an update
 * conditional on the old id, so every writer of the key follows one id at a time: a key ends in
 * exactly one pet, and never in a failure that repeats on every retry.
 *
 * Built on the DynamoDB document client the bundle already has (Powertools' idempotency utility
 * would add about 45 KB to the createPet bundle, beyond its size budget).
 */
import { createHash } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ApiError, RETRY_AFTER_SECONDS } from '../domain/errors.ts';
import { newWriteToken, timeOrderedId, type IdGenerator } from '../domain/ids.ts';
import type { NewPet, Pet } from '../domain/schemas.ts';
import { abortAt } from './deadline.ts';
import { isConditionFailed, unavailableAs503, type StoreTable } from './dynamo.ts';
import type { PetsTable } from './table.ts';
import { ID_ATTEMPTS, putPet, storedToken } from './petWrites.ts';
import { IDEMPOTENCY_KEY_PREFIX } from './table.ts';

/** How long a key is remembered. */
export const RECORD_TTL_SECONDS = 24 * 60 * 60;
/** How long a request waits for a concurrent one with the same key before answering 409. */
export const WAIT_FOR_CONCURRENT_MS = 1_000;
const POLL_INTERVAL_MS = 50;
/** A lease when the control table handle has no deadline (outside a request). */
const DEFAULT_LEASE_MS = 5_000;
const CLAIM_ROUNDS = 3;

interface RecordFields {
  pk: string;
  sk: 'record';
  bodyHash: string;
  /** The claim's write token: the pet it stores carries it too. */
  token: string;
  /** The id the pet is (to be) stored under; moved only when another pet holds it. */
  petId: number;
  /** Epoch ms until which the claiming request may still be working on it. */
  leaseUntil: number;
  /** Epoch seconds; DynamoDB TTL deletes the record some time after, and a claim overwrites it at once. */
  expiresAt: number;
}

/** A record is in progress, or completed with its pet (written in the same update). */
type IdempotencyRecord = (RecordFields & { state: 'in_progress' }) | (RecordFields & { state: 'completed'; pet: Pet });

export interface IdempotentResult {
  pet: Pet;
  /** The pet was created by an earlier request with the same key. */
  replayed: boolean;
}

export class IdempotentCreates {
  /**
   * Records in the `control` table, pets in the `pets` table; both scoped to the request (its deadline
   * ends the lease). `beforeNewPet` runs before each attempt to write a pet, never for a replay: the
   * daily create ceiling's count (./dailyCreates.ts); when it throws, the record is released unwritten.
   */
  constructor(
    private readonly control: StoreTable,
    private readonly pets: PetsTable,
    private readonly newId: IdGenerator = timeOrderedId,
    private readonly beforeNewPet: () => Promise<void> = async () => {},
  ) {}

  /** Creates `newPet` once for (`caller`, `key`), recorded as created by `createdBy` (a key id): see the module comment. */
  async create(caller: Buffer, key: string, newPet: NewPet, createdBy?: string): Promise<IdempotentResult> {
    const pk = recordKey(caller, key);
    const bodyHash = bodyHashOf(newPet);
    for (let round = 0; round < CLAIM_ROUNDS; round++) {
      const claim = await this.#claim(pk, bodyHash);
      if ('claimed' in claim) return this.#finish(claim.claimed, newPet, false, createdBy);
      let { found } = claim;
      if (!found) continue;
      if (found.bodyHash !== bodyHash) {
        throw new ApiError(
          'IDEMPOTENCY_KEY_REUSED',
          'This Idempotency-Key was already used with a different body; use a new key for a new pet.',
        );
      }
      found = await this.#awaitOther(found);
      if (found.state === 'completed') return this.#replay(found);
      if (found.leaseUntil > Date.now()) throw inProgress();
      const taken = await this.#takeOver(found);
      if (taken) return this.#finish(taken, newPet, true, createdBy);
    }
    throw inProgress();
  }

  /**
   * Puts a fresh in-progress record unless a live one exists: the record claimed, or the one found
   * instead (undefined when it vanished meanwhile). A refused put that finds its own token is this
   * claim, landed on an attempt whose answer was lost.
   */
  async #claim(
    pk: string,
    bodyHash: string,
  ): Promise<{ claimed: IdempotencyRecord } | { found: IdempotencyRecord | undefined }> {
    const now = Date.now();
    const record: IdempotencyRecord = {
      pk,
      sk: 'record',
      state: 'in_progress',
      bodyHash,
      token: newWriteToken(),
      petId: this.newId(),
      leaseUntil: this.#leaseEnd(now),
      expiresAt: Math.floor(now / 1000) + RECORD_TTL_SECONDS,
    };
    const put = new PutCommand({
      TableName: this.control.tableName,
      Item: record,
      ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :now',
      ExpressionAttributeValues: { ':now': Math.floor(now / 1000) },
    });
    if (await succeeded(unavailableAs503(this.control.documents.send(put, abortAt(this.control.deadline)))))
      return { claimed: record };
    const found = await this.#read(pk);
    return found?.token === record.token ? { claimed: record } : { found };
  }

  /**
   * Stores the record's pet (or finds it stored by an earlier attempt: replayed when `takenOver`),
   * moving the record to a new id while another pet holds its id, then marks the record completed.
   */
  async #finish(
    claimed: IdempotencyRecord,
    newPet: NewPet,
    takenOver: boolean,
    createdBy: string | undefined,
  ): Promise<IdempotentResult> {
    let record = claimed;
    let replayed = false;
    try {
      if (takenOver && (await storedToken(this.pets, record.petId)) === record.token) replayed = true;
      else {
        await this.beforeNewPet();
        record = await this.#store(record, newPet, createdBy);
      }
    } catch (error) {
      await this.#release(record);
      throw error;
    }
    const pet = { id: record.petId, ...newPet };
    // The pet is stored: a record left in progress is harmless (the next retry takes it over and
    // finds the pet), so a failure to mark it completed does not fail the create.
    await this.#update(record, 'SET #state = :completed, pet = :pet', { ':completed': 'completed', ':pet': pet }).catch(
      () => undefined,
    );
    return { pet, replayed };
  }

  /** Puts the pet under the record's id, drawing a new id for the record while the one it has is another pet's. */
  async #store(claimed: IdempotencyRecord, newPet: NewPet, createdBy: string | undefined): Promise<IdempotencyRecord> {
    let record = claimed;
    for (let attempt = 1; attempt <= ID_ATTEMPTS; attempt++) {
      if ((await putPet(this.pets, { id: record.petId, ...newPet }, record.token, createdBy)) === 'stored')
        return record;
      record = await this.#moveId(record);
    }
    throw new Error(`No free pet id after ${ID_ATTEMPTS} attempts.`);
  }

  /**
   * The completed record's pet again, while it is stored. An operator may have removed it since
   * (`npm run keys -- pets --remove`): then 410, never the pet answered as if it existed, nor written again.
   */
  async #replay(completed: IdempotencyRecord & { state: 'completed' }): Promise<IdempotentResult> {
    if ((await storedToken(this.pets, completed.petId)) !== completed.token) throw removed();
    return { pet: completed.pet, replayed: true };
  }

  /**
   * Moves the record from an id another pet holds to a new one, unless another writer of this key
   * moved it first: then the record as that writer left it (its id is the one to follow).
   */
  async #moveId(record: IdempotencyRecord): Promise<IdempotencyRecord> {
    const petId = this.newId();
    const move = new UpdateCommand({
      TableName: this.control.tableName,
      Key: { pk: record.pk, sk: 'record' },
      UpdateExpression: 'SET petId = :next',
      ConditionExpression: '#token = :token AND petId = :taken',
      ExpressionAttributeNames: { '#token': 'token' },
      ExpressionAttributeValues: { ':next': petId, ':token': record.token, ':taken': record.petId },
    });
    if (await succeeded(unavailableAs503(this.control.documents.send(move, abortAt(this.control.deadline)))))
      return { ...record, petId };
    const latest = await this.#read(record.pk);
    if (latest?.token !== record.token) throw inProgress();
    return { ...record, petId: latest.petId };
  }

  /** Ends the lease early after a failed attempt, so a retry need not wait for it (best effort). */
  async #release(record: IdempotencyRecord): Promise<void> {
    if ((this.control.deadline ?? Infinity) <= Date.now()) return;
    await this.#update(record, 'SET leaseUntil = :zero', { ':zero': 0 }, true).catch(() => undefined);
  }

  /** Takes over a lapsed in-progress record, unless another request just did; the record as taken. */
  async #takeOver(record: IdempotencyRecord): Promise<IdempotencyRecord | undefined> {
    const leaseUntil = this.#leaseEnd(Date.now());
    const taken = await succeeded(this.#update(record, 'SET leaseUntil = :lease', { ':lease': leaseUntil }, true));
    return taken ? { ...record, leaseUntil } : undefined;
  }

  /** Polls a record held by a live lease until it completes, its lease lapses, or the wait ends; any other record at once. */
  async #awaitOther(record: IdempotencyRecord): Promise<IdempotencyRecord> {
    const { deadline } = this.control;
    const until = Math.min(Date.now() + WAIT_FOR_CONCURRENT_MS, deadline === undefined ? Infinity : deadline - 250);
    let latest = record;
    while (latest.state === 'in_progress' && latest.leaseUntil > Date.now() && Date.now() + POLL_INTERVAL_MS < until) {
      await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
      latest = (await this.#read(record.pk)) ?? latest;
    }
    return latest;
  }

  /**
   * The record under `pk`, or undefined when there is none. Read only after a claim found it live
   * (a claim overwrites an expired record), so its expiry is not checked again.
   */
  async #read(pk: string): Promise<IdempotencyRecord | undefined> {
    const get = new GetCommand({ TableName: this.control.tableName, Key: { pk, sk: 'record' }, ConsistentRead: true });
    const { Item } = await unavailableAs503(this.control.documents.send(get, abortAt(this.control.deadline)));
    return Item as IdempotencyRecord | undefined;
  }

  /** An update of `record`, conditional on its token (and, when `whileInProgress`, its current lease). */
  #update(record: IdempotencyRecord, expression: string, values: Record<string, unknown>, whileInProgress = false) {
    // #state is named in every expression these updates use (DynamoDB refuses an unused name).
    const condition = whileInProgress
      ? '#token = :token AND #state = :inProgress AND leaseUntil = :lease0'
      : '#token = :token';
    return unavailableAs503(
      this.control.documents.send(
        new UpdateCommand({
          TableName: this.control.tableName,
          Key: { pk: record.pk, sk: 'record' },
          UpdateExpression: expression,
          ConditionExpression: condition,
          ExpressionAttributeNames: { '#token': 'token', '#state': 'state' },
          ExpressionAttributeValues: {
            ...values,
            ':token': record.token,
            ...(whileInProgress ? { ':inProgress': 'in_progress', ':lease0': record.leaseUntil } : {}),
          },
        }),
        abortAt(this.control.deadline),
      ),
    );
  }

  /** The lease of a request starting now: until its deadline, after which it makes no more store calls. */
  #leaseEnd(now: number): number {
    return this.control.deadline ?? now + DEFAULT_LEASE_MS;
  }
}

const removed = () =>
  new ApiError(
    'GONE',
    'The pet this Idempotency-Key created has since been removed; use a new Idempotency-Key to create a pet.',
  );

const inProgress = () =>
  new ApiError('IDEMPOTENCY_IN_PROGRESS', 'A request with this Idempotency-Key is still in progress; retry shortly.', {
    'Retry-After': String(RETRY_AFTER_SECONDS),
  });

/** The record's key: the caller's key digest (32 bytes, so the pair is unambiguous) and the idempotency key, hashed. */
export const recordKey = (caller: Buffer, key: string): string =>
  `${IDEMPOTENCY_KEY_PREFIX}${createHash('sha256').update(caller).update(key).digest('hex')}`;

/** The body as validated (the name as sent), in a fixed field order: the same pet hashes the same. */
export const bodyHashOf = (pet: NewPet): string =>
  createHash('sha256')
    .update(JSON.stringify([pet.name, pet.categoryId, pet.status ?? null]))
    .digest('hex');

/** True when a conditional write succeeded, false when its condition failed; other errors pass. */
async function succeeded(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (isConditionFailed(error)) return false;
    throw error;
  }
}
