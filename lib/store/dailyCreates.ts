/**
 * Each key's daily create ceiling (lib/domain/keyScope.ts), counted atomically in the control table:
 * one item per key per UTC day (`creates#<keyId>` / `<YYYY-MM-DD>`), raised by one conditional
 * UpdateItem (`ADD`) that only a count below the key's ceiling lets through, before the pet is put.
 * However many sandboxes create at once, a key's count never passes its ceiling; the refused create
 * is a 429 that says to retry at the next 00:00 UTC. The item expires by the table's TTL after its day.
 *
 * Counted before the put, apart from it, rather than in one transaction with it: a create that fails
 * after its count (a store fault, an id never freed) still spends one of its key's creates, which
 * errs on the side the ceiling exists for; a transaction would double the write cost of both items,
 * span both tables, and cannot run offline (dynalite has no TransactWriteItems). An SDK retry of an
 * update whose answer was lost may count one create twice, on the same side. A replayed idempotent
 * create writes nothing, so it is not counted (lib/store/idempotency.ts calls this only before a put).
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Caller } from '../domain/apiKeys.ts';
import { dailyCreatesUsedUp, nextUtcMidnight, utcDayOf } from '../domain/keyScope.ts';
import { abortAt } from './deadline.ts';
import { isConditionFailed, unavailableAs503, type StoreTable } from './dynamo.ts';
import { CREATE_COUNT_KEY_PREFIX, controlTable } from './table.ts';

/** The attribute that holds a day's count. */
export const CREATE_COUNT_ATTRIBUTE = 'creates';

/** The key of `keyId`'s count for the UTC day of `nowMs`. */
export const createCountKey = (keyId: string, nowMs: number) => ({
  [controlTable.partitionKey.name]: `${CREATE_COUNT_KEY_PREFIX}${keyId}`,
  [controlTable.sortKey.name]: utcDayOf(nowMs),
});

/**
 * Counts one create of `caller`'s key today (UTC, by `nowMs`); throws the 429 when its ceiling is
 * reached, a 503 when the store cannot say. A key without a ceiling (one given in configuration) is
 * not counted.
 */
export async function countCreate(control: StoreTable, caller: Caller, nowMs: number): Promise<void> {
  const ceiling = caller.createsPerDay;
  if (ceiling === undefined) return;
  const update = new UpdateCommand({
    TableName: control.tableName,
    Key: createCountKey(caller.keyId, nowMs),
    UpdateExpression: 'ADD #count :one SET #ttl = :expires',
    ConditionExpression: 'attribute_not_exists(#count) OR #count < :ceiling',
    ExpressionAttributeNames: { '#count': CREATE_COUNT_ATTRIBUTE, '#ttl': controlTable.timeToLiveAttribute },
    ExpressionAttributeValues: {
      ':one': 1,
      ':ceiling': ceiling,
      // Epoch seconds: the day's count is never read after its day ends.
      ':expires': Math.floor(nextUtcMidnight(nowMs) / 1000),
    },
  });
  try {
    await unavailableAs503(control.documents.send(update, abortAt(control.deadline)));
  } catch (error) {
    if (isConditionFailed(error)) throw dailyCreatesUsedUp(ceiling, nowMs);
    throw error;
  }
}
