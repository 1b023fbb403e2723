/**
 * The pet store: an interface the handlers use, and its DynamoDB implementation.
 * Store faults that a retry can cure (throttling, timeouts, an unreachable or missing table)
 * become 503 SERVICE_UNAVAILABLE here, so every handler answers them the same way.
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
import { serviceUnavailable } from './errors.ts';
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
  create(pet: NewPet): Promise<Pet>;
  get(id: number): Promise<Pet | undefined>;
  list(request: PageRequest): Promise<Page>;
}

export interface DynamoClientOptions {
  region?: string | undefined;
  /** A DynamoDB-compatible endpoint (dynalite locally); unset on AWS. */
  endpoint?: string | undefined;
}

export function createDynamoClient({ region, endpoint }: DynamoClientOptions): DynamoDBClient {
  return new DynamoDBClient({
    ...boundedClientConfig,
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

  async create(newPet: NewPet): Promise<Pet> {
    for (let attempt = 1; ; attempt++) {
      const pet: Pet = { id: this.newId(), ...newPet };
      try {
        await guarded(
          this.documents.send(
            new PutCommand({ TableName: this.tableName, Item: pet, ConditionExpression: 'attribute_not_exists(id)' }),
          ),
        );
        return pet;
      } catch (error) {
        const collided = (error as { name?: string }).name === 'ConditionalCheckFailedException';
        if (!collided || attempt >= ID_ATTEMPTS) throw error;
      }
    }
  }

  async get(id: number): Promise<Pet | undefined> {
    const { Item } = await guarded(this.documents.send(new GetCommand({ TableName: this.tableName, Key: { id } })));
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
          ? this.documents.send(this.#query(status, want, startKey))
          : this.documents.send(this.#scan(want, startKey)),
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

async function guarded<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    throw isStoreUnavailable(error) ? Object.assign(serviceUnavailable(), { cause: error }) : error;
  }
}

/** Only the Pet's own fields leave the store, whatever else an item holds. */
function toPet(item: Record<string, unknown>): Pet {
  const pet: Pet = { id: Number(item.id), name: String(item.name), categoryId: Number(item.categoryId) };
  if (typeof item.status === 'string') pet.status = item.status as PetStatus;
  return pet;
}
