/** Reading one pet (getPet; createPet's read-back), and the one mapping from an item to a Pet. */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Pet, PetStatus } from '../domain/schemas.ts';
import { abortAt } from './deadline.ts';
import { unavailableAs503, type StoreTable } from './dynamo.ts';

/**
 * The pet stored under `id`, read consistently, or undefined. A path's id is any int64, a bigint: the
 * store's numbers hold it exactly, so an id no pet has (0, -5, 2^63 - 1) is simply not found.
 */
export async function getPet(table: StoreTable, id: number | bigint): Promise<Pet | undefined> {
  const get = new GetCommand({ TableName: table.tableName, Key: { id }, ConsistentRead: true });
  const { Item } = await unavailableAs503(table.documents.send(get, abortAt(table.deadline)));
  return Item ? toPet(Item) : undefined;
}

/** Only the Pet's own fields leave the store, whatever else an item holds. */
export function toPet(item: Record<string, unknown>): Pet {
  const pet: Pet = { id: Number(item.id), name: String(item.name), categoryId: Number(item.categoryId) };
  if (typeof item.status === 'string') pet.status = item.status as PetStatus;
  return pet;
}
