/**
 * Repair of the persisted local store after a run that did not stop cleanly (kill -9, a crash).
 *
 * dynalite stores a put as separate LevelDB writes: the index entries first, then the item
 * (node_modules/dynalite/actions/putItem.js), and answers after both. A kill between them leaves
 * an index entry whose item was never stored: a phantom pet, listed by status but not found by id
 * nor listed unfiltered, for good.
 *
 * Such a put was never acknowledged (the answer comes after the item), so keeping it is as correct
 * as dropping it: the client saw no answer, as after a kill just after the item was stored. Pets
 * are immutable and never deleted, and the status index projects ALL attributes, so its entry
 * holds the whole pet: the repair rolls the put forward, storing that pet under its id with
 * `attribute_not_exists(id)`. Through the DynamoDB API alone, so it needs no LevelDB internals.
 *
 * The other way, a pet stored whose status-index entry is gone (a damaged log kept with
 * PETSTORE_KEEP_DAMAGED_STORE=1) is listed unfiltered but missing from its status listing: the
 * repair puts the pet again, unchanged, with `attribute_exists(id)`, which writes its index entry anew.
 *
 * The control table has no index: each of its writes is a single LevelDB put, whole or absent
 * after a kill, so it needs no repair.
 */
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient, isConditionFailed } from '../lib/store/dynamo.ts';
import { STATUS_INDEX, petsTable } from '../lib/store/table.ts';

/** Scans read 1 MB pages; an attempt may take longer than a request's budget on a large store. */
const SCAN_ATTEMPT_MS = 30_000;
/** Puts in flight at once while rolling forward. */
const PUT_CONCURRENCY = 16;

export interface RepairResult {
  /** Index entries found without their pet, each now stored. */
  repaired: number;
  /** Pets with a status found without their index entry, each now indexed. */
  reindexed: number;
  /** Pets in the table once repaired. */
  pets: number;
  ms: number;
}

/**
 * Makes the table and its status index agree: stores every pet the index holds but the table does
 * not, and indexes every pet with a status the index lacks. A table or index that does not exist
 * has nothing to repair (ensurePetsTable creates, or refuses, it next).
 */
export async function repairPetsTable(endpoint: string, tableName: string): Promise<RepairResult> {
  const started = performance.now();
  const documents = createDocumentClient({ endpoint, attemptTimeoutMs: SCAN_ATTEMPT_MS });
  try {
    if (!(await hasStatusIndex(documents, tableName)))
      return { repaired: 0, reindexed: 0, pets: 0, ms: performance.now() - started };
    const idName = petsTable.partitionKey.name;
    const shardName = petsTable.statusIndex.partitionKey.name;
    // The index first: a put made meanwhile (by `npm run invoke` on this store) is then found in
    // the table too, or is rolled forward by a put its own condition turns into a no-op.
    const indexed = await scanAll(documents, { TableName: tableName, IndexName: STATUS_INDEX });
    const stored = await scanAll(documents, {
      TableName: tableName,
      ProjectionExpression: '#id, #shard',
      ExpressionAttributeNames: { '#id': idName, '#shard': shardName },
    });
    const storedIds = new Set(stored.map((item) => item[idName]));
    const indexedIds = new Set(indexed.map((item) => item[idName]));
    const missing = indexed.filter((item) => !storedIds.has(item[idName]));
    const unindexed = stored.filter((item) => item[shardName] !== undefined && !indexedIds.has(item[idName]));
    await inBatches(missing, PUT_CONCURRENCY, (item) => rollForward(documents, tableName, item));
    await inBatches(unindexed, PUT_CONCURRENCY, (item) => reindex(documents, tableName, item[idName]));
    return {
      repaired: missing.length,
      reindexed: unindexed.length,
      pets: storedIds.size + missing.length,
      ms: performance.now() - started,
    };
  } finally {
    documents.destroy();
  }
}

async function hasStatusIndex(documents: DynamoDBDocumentClient, tableName: string): Promise<boolean> {
  try {
    const { Table } = await documents.send(new DescribeTableCommand({ TableName: tableName }));
    return (Table?.GlobalSecondaryIndexes ?? []).some((index) => index.IndexName === STATUS_INDEX);
  } catch (error) {
    if ((error as { name?: string }).name === 'ResourceNotFoundException') return false;
    throw error;
  }
}

type Item = Record<string, unknown>;

async function scanAll(
  documents: DynamoDBDocumentClient,
  input: ConstructorParameters<typeof ScanCommand>[0],
): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Item | undefined;
  do {
    const page = await documents.send(
      new ScanCommand({ ...input, ...(startKey ? { ExclusiveStartKey: startKey } : {}) }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

async function rollForward(documents: DynamoDBDocumentClient, tableName: string, item: Item): Promise<void> {
  try {
    await documents.send(
      new PutCommand({
        TableName: tableName,
        Item: item,
        ConditionExpression: 'attribute_not_exists(#id)',
        ExpressionAttributeNames: { '#id': petsTable.partitionKey.name },
      }),
    );
  } catch (error) {
    // Stored meanwhile: pets are immutable, so it is this very pet.
    if (!isConditionFailed(error)) throw error;
  }
}

/** Puts the stored pet `id` again as it is: dynalite writes its index entries with it. */
async function reindex(documents: DynamoDBDocumentClient, tableName: string, id: unknown): Promise<void> {
  const key = { [petsTable.partitionKey.name]: id };
  const { Item } = await documents.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
  if (!Item) return;
  await documents.send(
    new PutCommand({
      TableName: tableName,
      Item,
      ConditionExpression: 'attribute_exists(#id)',
      ExpressionAttributeNames: { '#id': petsTable.partitionKey.name },
    }),
  );
}

async function inBatches<T>(items: T[], size: number, run: (item: T) => Promise<void>): Promise<void> {
  for (let at = 0; at < items.length; at += size) await Promise.all(items.slice(at, at + size).map(run));
}
