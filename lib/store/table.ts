/**
 * The one definition of the pets table. The CDK stack, the local store set-up and the deployed
 * runner (which reads the synthesized template) all follow it.
 */
import type { StoreTable } from './dynamo.ts';

export const STATUS_INDEX = 'status-index';

/**
 * The status index is write-sharded: its partition key is `<status>#<n>`, n = id mod the shard
 * count, so one status's writes spread over that many index partitions instead of one (a GSI
 * partition takes about 1,000 write units a second, and a GSI that falls behind throttles the
 * table's own writes). Ids are milliseconds since 2026 above 11 random bits: `id mod n` (n a
 * power of two up to 2,048) reads only the random bits, so consecutive ids, even within one
 * millisecond, land on the shards uniformly; sequential ids would go round-robin. A listing with
 * a status queries every shard and merges them by id (petPages.ts).
 */
export const petsTable = {
  partitionKey: { name: 'id', type: 'N' },
  /**
   * The create that stored the pet (lib/store/petWrites.ts): a random token, so that a write whose
   * id is taken tells its own earlier attempt from another pet. Never answered (toPet drops it).
   */
  writeTokenAttribute: 'writeToken',
  /**
   * The id of the API key that created the pet (`keyId`, as `npm run keys -- list` shows it), so an
   * operator can list and remove one key's pets (tools/keys/keyPets.ts). Never answered (toPet drops it).
   * Pets created before it was recorded have none.
   */
  creatorAttribute: 'createdBy',
  statusIndex: {
    indexName: STATUS_INDEX,
    partitionKey: { name: 'statusShard', type: 'S' },
    sortKey: { name: 'id', type: 'N' },
    projection: 'ALL',
  },
} as const;

/**
 * The shard count when none is configured (local use, tests); both stages set theirs in
 * infra/stages.ts. Why 2: see the docs/performance.md ("The status index"): 2 shards lift one status's ceiling
 * from 1,000 to 2,000 creates a second, 10x production's API throttle, while a page of 1 still
 * reads no more index items than an unsharded index did (2 per pet). Raising it later needs no
 * backfill as long as listPets reads the new count before createPet writes it.
 */
export const DEFAULT_STATUS_INDEX_SHARDS = 2;
/** Each page queries every shard, so the count is kept small. */
export const MAX_STATUS_INDEX_SHARDS = 64;
/** The functions' environment variable that carries the shard count (lib/service.ts reads it). */
export const STATUS_INDEX_SHARDS_VARIABLE = 'STATUS_INDEX_SHARDS';

/** The pets table, with the status index's shard count (unset: `DEFAULT_STATUS_INDEX_SHARDS`). */
export interface PetsTable extends StoreTable {
  /** How many shards the status index has (stage setting `statusIndexShards`): writes and reads must agree. */
  statusIndexShards: number;
}

export const shardCountOf = (table: PetsTable): number => table.statusIndexShards;

/** The status-index partition key of the pet `id` with `status`. */
export const statusShardOf = (status: string, id: number, shards: number): string => `${status}#${id % shards}`;

/** Every status-index partition key of `status`, shard 0 first. */
export const statusShardsOf = (status: string, shards: number): string[] =>
  Array.from({ length: shards }, (_, n) => `${status}#${n}`);

/** The same definition as a DynamoDB CreateTable request, for local and test stores. */
export function createTableInput(tableName: string) {
  const { partitionKey, statusIndex } = petsTable;
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [
      { AttributeName: partitionKey.name, AttributeType: partitionKey.type },
      { AttributeName: statusIndex.partitionKey.name, AttributeType: statusIndex.partitionKey.type },
    ],
    KeySchema: [{ AttributeName: partitionKey.name, KeyType: 'HASH' as const }],
    GlobalSecondaryIndexes: [
      {
        IndexName: statusIndex.indexName,
        KeySchema: [
          { AttributeName: statusIndex.partitionKey.name, KeyType: 'HASH' as const },
          { AttributeName: statusIndex.sortKey.name, KeyType: 'RANGE' as const },
        ],
        Projection: { ProjectionType: statusIndex.projection },
      },
    ],
  };
}

/**
 * The control table: the service's own small records, apart from the pets. A string partition key
 * and sort key, and a DynamoDB TTL attribute for records that expire. Each kind of record has its
 * own partition-key prefix, so IAM can grant a function exactly its records (dynamodb:LeadingKeys):
 *
 * - `idempotency#<hex digest>` / `record`: a createPet idempotency record (expires).
 * - `apikeys` / `<keyId>`: an API key's digest and metadata.
 * - `cursor-secret` / `current`: the HMAC key that signs page cursors.
 * - `creates#<keyId>` / `<YYYY-MM-DD>`: how many pets a key created that UTC day (expires).
 */
export const controlTable = {
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  /** Seconds since the epoch after which DynamoDB may delete the item (readers check it too). */
  timeToLiveAttribute: 'expiresAt',
} as const;

export const DEFAULT_CONTROL_TABLE = 'petstore-control';

/** The control table as a DynamoDB CreateTable request, for local and test stores. */
export function createControlTableInput(tableName: string) {
  const { partitionKey, sortKey } = controlTable;
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [
      { AttributeName: partitionKey.name, AttributeType: partitionKey.type },
      { AttributeName: sortKey.name, AttributeType: sortKey.type },
    ],
    KeySchema: [
      { AttributeName: partitionKey.name, KeyType: 'HASH' as const },
      { AttributeName: sortKey.name, KeyType: 'RANGE' as const },
    ],
  };
}

/** The keys of the records this service keeps in the control table (see `controlTable`). */
export const controlKeys = {
  /** Partition of the API keys; the sort key is the key id. */
  apiKeys: 'apikeys',
  cursorSecret: { pk: 'cursor-secret', sk: 'current' },
} as const;

/** Partition-key prefix of createPet's idempotency records (`idempotency#<hex digest>` / `record`). */
export const IDEMPOTENCY_KEY_PREFIX = 'idempotency#';

/** Partition-key prefix of the keys' daily create counts (`creates#<keyId>` / `<YYYY-MM-DD>`, lib/store/dailyCreates.ts). */
export const CREATE_COUNT_KEY_PREFIX = 'creates#';
