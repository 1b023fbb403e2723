/**
 * Pages of pets (listPets): a Query of the status index when a status is asked for, else a Scan of
 * the table, in id order within a status. All of listing's store logic is here, behind `listPets`.
 */
import { QueryCommand, ScanCommand, type QueryCommandInput, type ScanCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Pet, PetStatus } from '../domain/schemas.ts';
import { bounded, guarded, type StoreTable } from './dynamo.ts';
import { toPet } from './petReads.ts';
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

/** Reads one more than asked, so `lastId` is set exactly when another page exists. */
export async function listPets({ documents, tableName }: StoreTable, { limit, status, afterId }: PageRequest): Promise<Page> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined =
    afterId === undefined ? undefined : status ? { id: afterId, status } : { id: afterId };
  do {
    const want = limit + 1 - items.length;
    const page = await guarded(
      status
        ? documents.send(statusQuery(tableName, status, want, startKey), bounded())
        : documents.send(tableScan(tableName, want, startKey), bounded()),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey && items.length <= limit);
  const pets = items.slice(0, limit).map(toPet);
  const last = pets.at(-1);
  return items.length > limit && last ? { pets, lastId: last.id } : { pets };
}

function statusQuery(tableName: string, status: PetStatus, limit: number, startKey?: Record<string, unknown>): QueryCommand {
  const input: QueryCommandInput = {
    TableName: tableName,
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

function tableScan(tableName: string, limit: number, startKey?: Record<string, unknown>): ScanCommand {
  const input: ScanCommandInput = { TableName: tableName, Limit: limit, ExclusiveStartKey: startKey };
  return new ScanCommand(input);
}
