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
