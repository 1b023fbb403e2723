/**
 * Pages of pets (listPets): with a status, a k-way merge by id of every shard of the status index
 * (lib/store/table.ts); without one, a Scan of the table. All of listing's store logic is here,
 * behind `listPets`.
 *
 * A status page reads each shard from just after the cursor's id, a share at a time: about its
 * part of the `limit + 1` pets wanted (the last only to know that more remain), so the index items
 * read stay near the pets listed. The
 * merge takes the smallest id any shard holds, and stops as soon as a shard that may hold more
 * has nothing left read: it never takes an id past what every unfinished shard has shown. Only
 * those shards are read again. A shard query that fails fails the page (503, lib/store/dynamo.ts):
 * a page is never short while more pets remain.
 */
import { QueryCommand, ScanCommand, type QueryCommandInput, type ScanCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Pet, PetStatus } from '../domain/schemas.ts';
import { abortAt } from './deadline.ts';
import { unavailableAs503, type StoreTable } from './dynamo.ts';
import { toPet } from './petReads.ts';
import { STATUS_INDEX, petsTable, shardCountOf, statusShardsOf, type PetsTable } from './table.ts';

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

type Item = Record<string, unknown>;

export async function listPets(table: PetsTable, { limit, status, afterId }: PageRequest): Promise<Page> {
  const { items, more } = status
    ? await mergedShards(table, statusShardsOf(status, shardCountOf(table)), limit, afterId)
    : await scanned(table, limit, afterId);
  const pets = items.map(toPet);
  const last = pets.at(-1);
  return more && last ? { pets, lastId: last.id } : { pets };
}

/** Up to `limit` items in order, and whether another exists after them. */
interface Merged {
  items: Item[];
  more: boolean;
}

/** One shard of the index as the merge reads it. */
interface ShardCursor {
  shardKey: string;
  /** Read and not yet taken, ascending id. */
  unread: Item[];
  /** Where the next query of this shard resumes (DynamoDB's LastEvaluatedKey). */
  resumeAt?: Record<string, unknown> | undefined;
  /** DynamoDB said this shard holds nothing more after what was read. */
  finished: boolean;
}

/**
 * The first `limit` items after `afterId` over all of `shardKeys`, in ascending id. Whether more
 * remain needs no further ordered take: any item read and not taken lies beyond the last one taken.
 */
async function mergedShards(
  table: StoreTable,
  shardKeys: string[],
  limit: number,
  afterId: number | undefined,
): Promise<Merged> {
  const shards: ShardCursor[] = shardKeys.map((shardKey) => ({ shardKey, unread: [], finished: false }));
  const taken: Item[] = [];
  for (;;) {
    takeInOrder(shards, taken, limit);
    if (taken.length === limit && shards.some((shard) => shard.unread.length > 0)) return { items: taken, more: true };
    const toRead = taken.length === limit ? shards.filter((shard) => !shard.finished) : shards.filter(waitingForMore);
    if (toRead.length === 0) return { items: taken, more: false };
    // A page's reads: a share of the `limit + 1` still wanted from each shard that must be read.
    const unfinished = shards.filter((shard) => !shard.finished).length;
    const share = shareOf(limit + 1 - taken.length, unfinished);
    await Promise.all(toRead.map((shard) => readMore(table, shard, share, afterId)));
  }
}

/** A shard that may hold more pets but has none read: nothing can be taken until it is read. */
const waitingForMore = (shard: ShardCursor): boolean => !shard.finished && shard.unread.length === 0;

/** Moves the smallest read id to `taken` while no unfinished shard is waiting to be read. */
function takeInOrder(shards: ShardCursor[], taken: Item[], limit: number): void {
  while (taken.length < limit && !shards.some(waitingForMore)) {
    let next: ShardCursor | undefined;
    for (const shard of shards) {
      const head = shard.unread[0];
      if (head && (!next || Number(head.id) < Number(next.unread[0]!.id))) next = shard;
    }
    if (!next) return;
    taken.push(next.unread.shift()!);
  }
}

/**
 * How many items to ask one of `shards` shards for when `wanted` more are needed: its expected
 * part, plus half a standard deviation of how ids fall on shards (binomial), so that a second
 * round is rare without reading much that the page does not take.
 */
export function shareOf(wanted: number, shards: number): number {
  const p = 1 / Math.max(1, shards);
  const spread = Math.sqrt(wanted * p * (1 - p));
  return Math.max(1, Math.round(wanted * p + spread / 2));
}

async function readMore(
  table: StoreTable,
  shard: ShardCursor,
  limit: number,
  afterId: number | undefined,
): Promise<void> {
  const query = statusShardQuery(
    table.tableName,
    shard.shardKey,
    limit,
    shard.resumeAt ? undefined : afterId,
    shard.resumeAt,
  );
  const page = await unavailableAs503(table.documents.send(query, abortAt(table.deadline)));
  shard.unread.push(...(page.Items ?? []));
  shard.resumeAt = page.LastEvaluatedKey;
  shard.finished = page.LastEvaluatedKey === undefined;
}

/** A Query of one status-index shard in ascending id: after `afterId`, or resuming at `resumeAt`. */
export function statusShardQuery(
  tableName: string,
  shardKey: string,
  limit: number,
  afterId?: number,
  resumeAt?: Record<string, unknown>,
): QueryCommand {
  const { partitionKey, sortKey } = petsTable.statusIndex;
  const input: QueryCommandInput = {
    TableName: tableName,
    IndexName: STATUS_INDEX,
    KeyConditionExpression: afterId === undefined ? '#shard = :shard' : '#shard = :shard AND #id > :after',
    ExpressionAttributeNames: {
      '#shard': partitionKey.name,
      ...(afterId === undefined ? {} : { '#id': sortKey.name }),
    },
    ExpressionAttributeValues: { ':shard': shardKey, ...(afterId === undefined ? {} : { ':after': afterId }) },
    ScanIndexForward: true,
    Limit: limit,
    ExclusiveStartKey: resumeAt,
  };
  return new QueryCommand(input);
}

/** The first `limit` items of the table's own order after `afterId`; one more is read to know whether more remain. */
async function scanned(table: StoreTable, limit: number, afterId: number | undefined): Promise<Merged> {
  const items: Item[] = [];
  let startKey: Record<string, unknown> | undefined = afterId === undefined ? undefined : { id: afterId };
  do {
    const page = await unavailableAs503(
      table.documents.send(tableScan(table.tableName, limit + 1 - items.length, startKey), abortAt(table.deadline)),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey && items.length <= limit);
  return { items: items.slice(0, limit), more: items.length > limit };
}

function tableScan(tableName: string, limit: number, startKey?: Record<string, unknown>): ScanCommand {
  const input: ScanCommandInput = { TableName: tableName, Limit: limit, ExclusiveStartKey: startKey };
  return new ScanCommand(input);
}
