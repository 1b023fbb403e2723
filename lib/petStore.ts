/**
 * The pet store: an interface the handlers use, and its DynamoDB implementation.
 * Store faults that a retry can cure (throttling, timeouts, an unreachable or missing table)
 * become 503 SERVICE_UNAVAILABLE here, so every handler answers them the same way. A write whose
 * outcome is unknown (the request may have reached DynamoDB) says so in its 503.
 * Every call is aborted at the request's deadline (lib/deadline.ts).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  type QueryCommandInput,
  type ScanCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { boundedClientConfig, endpointConfig } from './awsClients.ts';
import { deadlineSignal } from './deadline.ts';
import { serviceUnavailable, writeOutcomeUnknown } from './errors.ts';
import { timeOrderedId, type IdGenerator } from './ids.ts';
import type { NewPet, Pet, PetStatus } from './schemas.ts';
import { STATUS_INDEX } from './table.ts';

export interface PageRequest {
  limit: number;
  status?: PetStatus | undefined;
  /** The id of the last pet of the previous page. */
  afterId?: number | undefined;
}

export interface Page {
  pets: Pet[];
  /** The id to continue after, present only when more pets remain. */
  lastId?: number;
}

export interface PetStore {
  /**
   * Stores a new pet under a fresh id, or under `id` when given (an idempotent retry of a create
   * that may already have stored it: then the pet already stored under `id` is the answer).
   */
  create(pet: NewPet, id?: number): Promise<Pet>;
  get(id: number): Promise<Pet | undefined>;
  list(request: PageRequest): Promise<Page>;
}

export interface DynamoClientOptions {
  region?: string | undefined;
  /** A DynamoDB-compatible endpoint (dynalite locally); unset on AWS. */
  endpoint?: string | undefined;
  /** Per-attempt connect and answer timeouts (default `boundedClientConfig`'s 1 s each). */
  attemptTimeoutMs?: number | undefined;
}

export function createDynamoClient({ region, endpoint, attemptTimeoutMs }: DynamoClientOptions): DynamoDBClient {
  const { requestHandler } = boundedClientConfig;
  return new DynamoDBClient({
    ...boundedClientConfig,
    requestHandler: attemptTimeoutMs
      ? { ...requestHandler, connectionTimeout: attemptTimeoutMs, requestTimeout: attemptTimeoutMs }
      : requestHandler,
    region: region ?? 'us-east-1',
    ...endpointConfig(endpoint),
    // A local endpoint takes any credentials; never look for real ones.
    ...(endpoint ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  });
}

export function createDocumentClient(options: DynamoClientOptions): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(createDynamoClient(options), { marshallOptions: { removeUndefinedValues: true } });
}

const ID_ATTEMPTS = 5;

/** Per-call options: abort at the current request's deadline. */
export const bounded = () => ({ abortSignal: deadlineSignal() });
const RETRYABLE = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'LimitExceededException',
  'InternalServerError',
  'ServiceUnavailable',
  'ResourceNotFoundException',
  'TimeoutError',
  'RequestTimeout',
  'AbortError',
]);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/** Whether an error from the DynamoDB client means "unavailable for now" rather than a bug. */
export function isStoreUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { name, code, $metadata } = error as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  return (
    RETRYABLE.has(name ?? '') ||
    NETWORK_CODES.has(code ?? '') ||
    ($metadata?.httpStatusCode ?? 0) >= 500
  );
}

export class DynamoPetStore implements PetStore {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly newId: IdGenerator = timeOrderedId,
  ) {}

  async create(newPet: NewPet, id?: number): Promise<Pet> {
    if (id !== undefined) {
      const stored = await this.#putOnce({ id, ...newPet });
      if (!stored) throw new Error(`Pet id ${id} is held by another pet.`);
      return stored;
    }
    for (let attempt = 1; attempt <= ID_ATTEMPTS; attempt++) {
      const stored = await this.#putOnce({ id: this.newId(), ...newPet });
      if (stored) return stored;
    }
    throw new Error(`No free pet id after ${ID_ATTEMPTS} attempts.`);
  }

  /**
   * Puts `pet` unless its id is taken. A taken id may be this very write: the SDK retries a put
   * whose answer was lost, and the retry then finds the pet the first attempt stored. So a taken
   * id is read back: the same pet means stored (answered), another pet means a collision (undefined).
   */
  async #putOnce(pet: Pet): Promise<Pet | undefined> {
    try {
      await guardedWrite(
        this.documents.send(
          new PutCommand({ TableName: this.tableName, Item: pet, ConditionExpression: 'attribute_not_exists(id)' }),
          bounded(),
        ),
      );
      return pet;
    } catch (error) {
      if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
    }
    const existing = await this.get(pet.id);
    return existing && samePet(existing, pet) ? pet : undefined;
  }

  async get(id: number): Promise<Pet | undefined> {
    const { Item } = await guarded(this.documents.send(new GetCommand({ TableName: this.tableName, Key: { id }, ConsistentRead: true }), bounded()));
    return Item ? toPet(Item) : undefined;
  }

  /** Reads one more than asked, so `lastId` is set exactly when another page exists. */
  async list({ limit, status, afterId }: PageRequest): Promise<Page> {
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined =
      afterId === undefined ? undefined : status ? { id: afterId, status } : { id: afterId };
    do {
      const want = limit + 1 - items.length;
      const page = await guarded(
        status
          ? this.documents.send(this.#query(status, want, startKey), bounded())
          : this.documents.send(this.#scan(want, startKey), bounded()),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey && items.length <= limit);
    const pets = items.slice(0, limit).map(toPet);
    const last = pets.at(-1);
    return items.length > limit && last ? { pets, lastId: last.id } : { pets };
  }

  #query(status: PetStatus, limit: number, startKey?: Record<string, unknown>): QueryCommand {
    const input: QueryCommandInput = {
      TableName: this.tableName,
      IndexName: STATUS_INDEX,
      KeyConditionExpression: '#status = :status',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':status': status },
      ScanIndexForward: true,
      Limit: limit,
      ExclusiveStartKey: startKey,
    };
    return new QueryCommand(input);
  }

  #scan(limit: number, startKey?: Record<string, unknown>): ScanCommand {
    const input: ScanCommandInput = { TableName: this.tableName, Limit: limit, ExclusiveStartKey: startKey };
    return new ScanCommand(input);
  }
}

/** Errors after which the write surely did not happen: refused before it reached the table. */
const NOT_APPLIED = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'LimitExceededException',
  'ResourceNotFoundException',
]);
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether a failed write may still have been applied: a timeout, an abort or a reset after the
 * request was sent, or a 5xx (DynamoDB documents InternalServerError as "may have succeeded").
 */
export function isWriteOutcomeUnknown(error: unknown): boolean {
  if (!isStoreUnavailable(error)) return false;
  const { name, code, message } = error as { name?: string; code?: string; message?: string };
  const neverConnected = name === 'TimeoutError' && /did not establish a connection/.test(message ?? '');
  return !NOT_APPLIED.has(name ?? '') && !NOT_SENT_CODES.has(code ?? '') && !neverConnected;
}

/** A write: like `guarded`, but a failure after which the write may have landed says so. */
const guardedWrite = <T>(call: Promise<T>): Promise<T> => guarded(call, { write: true });

/** Store faults a retry can cure become 503 (for a write whose outcome is unknown, a 503 that says so). */
export async function guarded<T>(call: Promise<T>, { write = false } = {}): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (write && isWriteOutcomeUnknown(error)) throw Object.assign(writeOutcomeUnknown(), { cause: error });
    throw isStoreUnavailable(error) ? Object.assign(serviceUnavailable(), { cause: error }) : error;
  }
}

const samePet = (a: Pet, b: Pet): boolean =>
  a.id === b.id && a.name === b.name && a.categoryId === b.categoryId && a.status === b.status;

/** Only the Pet's own fields leave the store, whatever else an item holds. */
function toPet(item: Record<string, unknown>): Pet {
  const pet: Pet = { id: Number(item.id), name: String(item.name), categoryId: Number(item.categoryId) };
  if (typeof item.status === 'string') pet.status = item.status as PetStatus;
  return pet;
}
