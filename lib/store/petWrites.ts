/**
 * Storing a new pet (createPet): a conditional put under a fresh id, read back when the id is taken.
 * A pet with a status also carries its status-index shard key (lib/store/table.ts); one without is
 * in no shard, so no status listing finds it.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { timeOrderedId, type IdGenerator } from '../domain/ids.ts';
import type { NewPet, Pet } from '../domain/schemas.ts';
import { bounded, guardedWrite, isConditionFailed } from './dynamo.ts';
import { getPet } from './petReads.ts';
import { petsTable, shardCountOf, statusShardOf, type PetsTable } from './table.ts';

const ID_ATTEMPTS = 5;

export interface CreateOptions {
  /**
   * The id to store under (an idempotent retry of a create that may already have stored it: then
   * the pet already stored under `id` is the answer). Unset: a fresh id from `newId`.
   */
  id?: number | undefined;
  newId?: IdGenerator;
}

/** Stores `newPet` under a fresh id (or `options.id`) and answers it as stored. */
export async function createPet(table: PetsTable, newPet: NewPet, { id, newId = timeOrderedId }: CreateOptions = {}): Promise<Pet> {
  if (id !== undefined) {
    const stored = await putOnce(table, { id, ...newPet });
    if (!stored) throw new Error(`Pet id ${id} is held by another pet.`);
    return stored;
  }
  for (let attempt = 1; attempt <= ID_ATTEMPTS; attempt++) {
    const stored = await putOnce(table, { id: newId(), ...newPet });
    if (stored) return stored;
  }
  throw new Error(`No free pet id after ${ID_ATTEMPTS} attempts.`);
}

/**
 * Puts `pet` unless its id is taken. A taken id may be this very write: the SDK retries a put
 * whose answer was lost, and the retry then finds the pet the first attempt stored. So a taken
 * id is read back: the same pet means stored (answered), another pet means a collision (undefined).
 */
async function putOnce(table: PetsTable, pet: Pet): Promise<Pet | undefined> {
  try {
    await guardedWrite(
      table.documents.send(
        new PutCommand({ TableName: table.tableName, Item: itemOf(pet, shardCountOf(table)), ConditionExpression: 'attribute_not_exists(id)' }),
        bounded(),
      ),
    );
    return pet;
  } catch (error) {
    if (!isConditionFailed(error)) throw error;
  }
  const existing = await getPet(table, pet.id);
  return existing && samePet(existing, pet) ? pet : undefined;
}

/** The stored item: the pet, and its status-index shard key when it has a status. */
const itemOf = (pet: Pet, shards: number): Record<string, unknown> =>
  pet.status === undefined ? { ...pet } : { ...pet, [petsTable.statusIndex.partitionKey.name]: statusShardOf(pet.status, pet.id, shards) };

const samePet = (a: Pet, b: Pet): boolean =>
  a.id === b.id && a.name === b.name && a.categoryId === b.categoryId && a.status === b.status;
