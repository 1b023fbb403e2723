/**
 * Storing a new pet (createPet): a conditional put under a fresh id, stamped with the create's
 * write token. A pet with a status also carries its status-index shard key (lib/store/table.ts);
 * one without is in no shard, so no status listing finds it.
 *
 * A put that finds its id taken reads the stored pet's token: its own token means its own earlier
 * attempt landed (the SDK retries a put whose answer was lost), so the pet is stored; any other
 * token is another create that drew the same id, and this create draws a new one. Bodies are never
 * compared: two creates of the same pet in the same millisecond are two pets.
 *
 * Why a read and not `ReturnValuesOnConditionCheckFailure: ALL_OLD`: DynamoDB would return the
 * stored item with the refusal and save the round trip, but dynalite (the local store and the
 * deployed runner's) ignores it, so that path could never run offline. The read happens only on a
 * taken id.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { newWriteToken, timeOrderedId, type IdGenerator } from '../domain/ids.ts';
import type { NewPet, Pet } from '../domain/schemas.ts';
import { abortAt } from './deadline.ts';
import { isConditionFailed, unavailableAs503, writeUnavailableAs503 } from './dynamo.ts';
import { petsTable, shardCountOf, statusShardOf, type PetsTable } from './table.ts';

/** How many ids one create draws before it gives up (each taken one is a collision). */
export const ID_ATTEMPTS = 8;

export interface CreateOptions {
  newId?: IdGenerator | undefined;
  /** The create's write token (default: a fresh one). */
  token?: string | undefined;
  /** The id of the key that creates it, stored on the item (`petsTable.creatorAttribute`). */
  createdBy?: string | undefined;
}

/** Stores `newPet` under a fresh id and answers it as stored. */
export async function createPet(
  table: PetsTable,
  newPet: NewPet,
  { newId = timeOrderedId, token = newWriteToken(), createdBy }: CreateOptions = {},
): Promise<Pet> {
  for (let attempt = 1; attempt <= ID_ATTEMPTS; attempt++) {
    const pet = { id: newId(), ...newPet };
    if ((await putPet(table, pet, token, createdBy)) === 'stored') return pet;
  }
  throw new Error(`No free pet id after ${ID_ATTEMPTS} attempts.`);
}

/** Whether the pet is stored under its id (by this write, or an earlier attempt with its token), or the id is another pet's. */
export type PutOutcome = 'stored' | 'taken';

/**
 * Puts `pet` with `token` (and the id of the key that creates it) unless its id is taken; a taken id
 * holding the same token is this write's own.
 */
export async function putPet(table: PetsTable, pet: Pet, token: string, createdBy?: string): Promise<PutOutcome> {
  try {
    await writeUnavailableAs503(
      table.documents.send(
        new PutCommand({
          TableName: table.tableName,
          Item: itemOf(pet, token, shardCountOf(table), createdBy),
          ConditionExpression: 'attribute_not_exists(id)',
        }),
        abortAt(table.deadline),
      ),
    );
    return 'stored';
  } catch (error) {
    if (!isConditionFailed(error)) throw error;
  }
  return (await storedToken(table, pet.id)) === token ? 'stored' : 'taken';
}

/** The write token of the pet stored under `id` (read consistently); undefined when none is, or it has none. */
export async function storedToken(table: PetsTable, id: number): Promise<string | undefined> {
  const get = new GetCommand({
    TableName: table.tableName,
    Key: { id },
    ConsistentRead: true,
    ProjectionExpression: '#token',
    ExpressionAttributeNames: { '#token': petsTable.writeTokenAttribute },
  });
  const { Item } = await unavailableAs503(table.documents.send(get, abortAt(table.deadline)));
  return Item?.[petsTable.writeTokenAttribute] as string | undefined;
}

/** The stored item: the pet, its write token, its creator's key id, and its status-index shard key when it has a status. */
function itemOf(pet: Pet, token: string, shards: number, createdBy: string | undefined): Record<string, unknown> {
  const item: Record<string, unknown> = { ...pet, [petsTable.writeTokenAttribute]: token };
  if (createdBy !== undefined) item[petsTable.creatorAttribute] = createdBy;
  if (pet.status !== undefined)
    item[petsTable.statusIndex.partitionKey.name] = statusShardOf(pet.status, pet.id, shards);
  return item;
}
