/**
 * The cursor-signing secret, kept in the control table (`cursor-secret` / `current`) and read
 * through the DynamoDB client listPets already carries. The first function that needs it creates
 * it, with a conditional put of a random value, so no deployment step has to choose or store it;
 * every instance then reads the same value. Only listPets imports this module.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { CursorCodec, type SecretSource } from '../domain/pagination.ts';
import { refreshing } from './cache.ts';
import { isConditionFailed, type StoreTable } from './dynamo.ts';
import { controlKeys, controlTable } from './table.ts';

/** Re-read now and then, in the background, so a secret rotated by hand is picked up. */
export const DEFAULT_SECRET_TTL_MS = 15 * 60_000;

const secretKey = {
  [controlTable.partitionKey.name]: controlKeys.cursorSecret.pk,
  [controlTable.sortKey.name]: controlKeys.cursorSecret.sk,
};

export interface ControlTableSecretOptions extends StoreTable {
  ttlMs?: number;
  now?: () => number;
}

export function controlTableCursorSecret({ documents, tableName, ttlMs = DEFAULT_SECRET_TTL_MS, now }: ControlTableSecretOptions): SecretSource {
  const read = async (): Promise<string | undefined> => {
    const { Item } = await documents.send(new GetCommand({ TableName: tableName, Key: secretKey, ConsistentRead: true }));
    const value: unknown = Item?.value;
    return typeof value === 'string' && value.length > 0 ? value : undefined;
  };
  const create = async (): Promise<string> => {
    const value = randomBytes(32).toString('base64url');
    try {
      await documents.send(
        new PutCommand({
          TableName: tableName,
          Item: { ...secretKey, value, createdAt: new Date().toISOString() },
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': controlTable.partitionKey.name },
        }),
      );
      return value;
    } catch (error) {
      // Another instance created it first: everyone signs with that one.
      if (!isConditionFailed(error)) throw error;
      const stored = await read();
      if (stored === undefined) throw new Error(`The cursor secret in ${tableName} exists but holds no value.`, { cause: error });
      return stored;
    }
  };
  return refreshing({
    name: `the cursor secret in ${tableName}`,
    ttlMs,
    ...(now ? { now } : {}),
    load: async () => (await read()) ?? (await create()),
  });
}

/** The codec listPets signs with: the configured secret (local use), else the control table's. */
export function cursorCodecFor({ cursorSecret, control }: { cursorSecret?: string | undefined; control: StoreTable }): CursorCodec {
  return new CursorCodec(cursorSecret ? async () => cursorSecret : controlTableCursorSecret(control));
}
