/**
 * The one definition of the pets table. The CDK stack and the local store set-up both read it.
 */
export const STATUS_INDEX = 'status-index';

export const petsTable = {
  partitionKey: { name: 'id', type: 'N' },
  statusIndex: {
    indexName: STATUS_INDEX,
    partitionKey: { name: 'status', type: 'S' },
    sortKey: { name: 'id', type: 'N' },
    projection: 'ALL',
  },
} as const;

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
