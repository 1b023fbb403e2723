/**
 * `keys pets <keyId>`: the pets one API key created (their `createdBy`, lib/store/table.ts), listed,
 * and with `--remove` deleted after a confirmation. It reads and writes the stage's pets table only:
 * a paged Scan filtered on `createdBy` and, per pet, a DeleteItem conditional on that same
 * `createdBy`, so it never deletes a pet another key wrote, whatever happens between the two.
 * Pets created before creators were recorded carry no `createdBy`: no key id matches them.
 */
import { DeleteCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Stage } from '../../lib/domain/stages.ts';
import { isConditionFailed } from '../../lib/store/dynamo.ts';
import { petsTable } from '../../lib/store/table.ts';
import { KeysError, describeError } from './stage.ts';

/** Deletes in flight at once: fast enough for a day of one key's creates, gentle on an on-demand table. */
const DELETES_IN_FLIGHT = 8;

/** A pet as the command shows it: never more than the API would answer. */
interface KeyPet {
  id: number;
  name: string;
  status: string | undefined;
}

export interface KeyPetsRequest {
  stage: Stage;
  /** The pets table. */
  table: string;
  keyId: string;
  /** Delete them (after `confirm`); otherwise only list them. */
  remove: boolean;
  /**
   * Asks the operator to confirm the removal: resolves true when they did. Undefined when `--yes`
   * was given (a removal without a terminal needs it: ./keys.ts checks before anything is read).
   */
  confirm: ((question: string, expected: string) => Promise<boolean>) | undefined;
  out: (line: string) => void;
}

/** Lists the key's pets; with `remove`, confirms and deletes them. */
export async function keyPets(client: DynamoDBDocumentClient, request: KeyPetsRequest): Promise<void> {
  const { stage, table, keyId, remove, confirm, out } = request;
  const pets = await petsCreatedBy(client, table, keyId);
  if (pets.length === 0) return out(`No pets created by key ${keyId} in ${stage} (${table}).`);
  out(`Pets created by key ${keyId} in ${stage} (${table}):`);
  printPets(pets, out);
  const count = countOf(pets.length);
  if (!remove) return out(`${count}. Nothing removed (dry run): add --remove to remove them.`);
  if (confirm && !(await confirm(`Type the key id (${keyId}) to remove these ${count}: `, keyId)))
    throw new KeysError(`not confirmed: nothing removed (type the key id exactly, or give --yes).`);
  const { removed, gone } = await removeAll(client, table, keyId, pets);
  out(
    `Removed ${countOf(removed)} created by key ${keyId}.${gone ? ` Skipped ${gone}: gone, or no longer the key's.` : ''}`,
  );
}

const countOf = (n: number): string => `${n} pet${n === 1 ? '' : 's'}`;

/** Every pet whose item names `keyId` as its creator, in id order: a Scan of the whole table, page by page. */
async function petsCreatedBy(client: DynamoDBDocumentClient, table: string, keyId: string): Promise<KeyPet[]> {
  const pets: KeyPet[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: table,
        FilterExpression: '#by = :keyId',
        ProjectionExpression: '#id, #name, #status',
        ExpressionAttributeNames: {
          '#by': petsTable.creatorAttribute,
          '#id': petsTable.partitionKey.name,
          '#name': 'name',
          '#status': 'status',
        },
        ExpressionAttributeValues: { ':keyId': keyId },
        // A pet created a moment ago is listed too.
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? [])
      pets.push({
        id: Number(item.id),
        name: String(item.name),
        status: typeof item.status === 'string' ? item.status : undefined,
      });
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return pets.sort((a, b) => a.id - b.id);
}

/** One line per pet; the name as a JSON string, so that what a client sent cannot pass for output of its own. */
function printPets(pets: readonly KeyPet[], out: (line: string) => void): void {
  const idWidth = Math.max(2, ...pets.map((pet) => String(pet.id).length));
  const statusWidth = Math.max(6, ...pets.map((pet) => (pet.status ?? '-').length));
  out(`${'ID'.padEnd(idWidth)}  ${'STATUS'.padEnd(statusWidth)}  NAME`);
  for (const pet of pets)
    out(`${String(pet.id).padEnd(idWidth)}  ${(pet.status ?? '-').padEnd(statusWidth)}  ${JSON.stringify(pet.name)}`);
}

/**
 * Deletes each pet while it is still the key's; one already gone (or no longer the key's) is counted
 * apart. A failed delete stops the removal, saying how far it got: running the command again
 * finishes it.
 */
async function removeAll(
  client: DynamoDBDocumentClient,
  table: string,
  keyId: string,
  pets: readonly KeyPet[],
): Promise<{ removed: number; gone: number }> {
  let removed = 0;
  let gone = 0;
  let next = 0;
  let failure: unknown;
  const worker = async () => {
    while (next < pets.length && failure === undefined) {
      const pet = pets[next++]!;
      try {
        await client.send(
          new DeleteCommand({
            TableName: table,
            Key: { [petsTable.partitionKey.name]: pet.id },
            ConditionExpression: '#by = :keyId',
            ExpressionAttributeNames: { '#by': petsTable.creatorAttribute },
            ExpressionAttributeValues: { ':keyId': keyId },
          }),
        );
        removed++;
      } catch (error) {
        if (isConditionFailed(error)) gone++;
        else failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(DELETES_IN_FLIGHT, pets.length) }, worker));
  if (failure !== undefined) {
    throw new KeysError(
      `removal stopped after ${countOf(removed)} of ${pets.length} (${describeError(failure)}); run it again to remove the rest.`,
    );
  }
  return { removed, gone };
}
