/**
 * The cursor-signing secrets, kept in one control-table item (`cursor-secret` / `current`) and read
 * through the DynamoDB client listPets already carries. Only listPets and the keys CLI import this.
 *
 * - The first function that needs a secret creates it, with a conditional put of a random `value`
 *   (no deployment step chooses or stores it). An item holding only `value` is one secret, id
 *   `UNNAMED_SECRET_ID`, in use since forever: every item before rotation had this shape.
 * - `npm run keys -- rotate-cursor-secret` (`rotateCursorSecret`) adds a secret to the item's
 *   `secrets` list, with a new id, that signs from `activeFrom` = rotation + `CURSOR_SECRET_PROPAGATION_MS`
 *   and is accepted at once; the secret it replaces keeps verifying its cursors until `retiresAt` =
 *   `activeFrom` + `CURSOR_SECRET_OVERLAP_MS`. Every instance reads the item again within the
 *   propagation bound, so all of them know the new secret before any signs with it: instances never
 *   disagree on a cursor. `value` is left as it was, so a rolled-back function still finds a secret.
 * - A kept copy is never used past `CURSOR_SECRET_PROPAGATION_MS` from the start of its read (busy or
 *   idle; then the request waits for a read, and a table that cannot be read is a 503), and a retired
 *   secret is refused from its `retiresAt` on, by each instance's own clock.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand, type DynamoDBDocumentClient, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import {
  CursorCodec,
  UNNAMED_SECRET_ID,
  fixedSecret,
  type CursorKeyring,
  type SecretSource,
} from '../domain/pagination.ts';
import { DEFAULT_GRACE_MS, refreshing } from './cache.ts';
import { isConditionFailed, unavailableAs503, type StoreTable } from './dynamo.ts';
import { controlKeys, controlTable } from './table.ts';

/** How long a read of the secrets is used before the next one. */
const DEFAULT_SECRET_TTL_MS = 5 * 60_000;
/** The longest any instance goes without seeing a rotation: a read is never used past this age. */
export const CURSOR_SECRET_PROPAGATION_MS = DEFAULT_SECRET_TTL_MS + DEFAULT_GRACE_MS;
/** How long cursors signed by the replaced secret keep working once the new one signs. */
export const CURSOR_SECRET_OVERLAP_MS = 60 * 60_000;

/** One secret of the item's `secrets` list; instants are epoch milliseconds. */
interface StoredCursorSecret {
  id: string;
  value: string;
  activeFrom: number;
  retiresAt?: number;
}

const secretKey = {
  [controlTable.partitionKey.name]: controlKeys.cursorSecret.pk,
  [controlTable.sortKey.name]: controlKeys.cursorSecret.sk,
};

const newSecretValue = () => randomBytes(32).toString('base64url');

interface SecretsItem {
  secrets: StoredCursorSecret[];
  /** Whether the item has a `secrets` list (else it holds only the first, unnamed `value`). */
  listed: boolean;
}

const readItem = async (
  documents: DynamoDBDocumentClient,
  tableName: string,
): Promise<Record<string, unknown> | undefined> =>
  (await documents.send(new GetCommand({ TableName: tableName, Key: secretKey, ConsistentRead: true }))).Item;

const readSecrets = async (documents: DynamoDBDocumentClient, tableName: string): Promise<SecretsItem | undefined> => {
  const item = await readItem(documents, tableName);
  return item && secretsOf(item, tableName);
};

function secretsOf(Item: Record<string, unknown>, tableName: string): SecretsItem {
  if (Array.isArray(Item.secrets)) {
    const secrets = (Item.secrets as unknown[]).filter(isStoredSecret);
    if (secrets.length > 0) return { secrets, listed: true };
  }
  const value: unknown = Item.value;
  if (typeof value !== 'string' || value.length === 0)
    throw new Error(`The cursor secret in ${tableName} exists but holds no value.`);
  return { secrets: [{ id: UNNAMED_SECRET_ID, value, activeFrom: 0 }], listed: false };
}

function isStoredSecret(each: unknown): each is StoredCursorSecret {
  const { id, value, activeFrom, retiresAt } = (each ?? {}) as Record<string, unknown>;
  return (
    typeof id === 'string' &&
    typeof value === 'string' &&
    value.length > 0 &&
    typeof activeFrom === 'number' &&
    (retiresAt === undefined || typeof retiresAt === 'number')
  );
}

/** Which secrets sign and verify at `at`: the newest active one signs; every one not yet retired verifies. */
function keyringAt(secrets: readonly StoredCursorSecret[], at: number): CursorKeyring {
  const accepted = secrets.filter((each) => each.retiresAt === undefined || at < each.retiresAt);
  const signing = accepted.filter((each) => each.activeFrom <= at).sort((a, b) => b.activeFrom - a.activeFrom)[0];
  if (!signing) throw new Error('No cursor secret is active now.');
  return {
    signing: { id: signing.id, value: signing.value },
    accepted: accepted.map(({ id, value }) => ({ id, value })),
  };
}

export interface ControlTableSecretOptions extends StoreTable {
  ttlMs?: number;
  now?: () => number;
}

export function controlTableCursorSecret({
  documents,
  tableName,
  ttlMs = DEFAULT_SECRET_TTL_MS,
  now = Date.now,
}: ControlTableSecretOptions): SecretSource {
  const create = async (): Promise<StoredCursorSecret[]> => {
    const value = newSecretValue();
    try {
      await documents.send(
        new PutCommand({
          TableName: tableName,
          Item: { ...secretKey, value, createdAt: new Date(now()).toISOString() },
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': controlTable.partitionKey.name },
        }),
      );
      return [{ id: UNNAMED_SECRET_ID, value, activeFrom: 0 }];
    } catch (error) {
      // Another instance created it first: everyone signs with that one.
      if (!isConditionFailed(error)) throw error;
      const stored = await readSecrets(documents, tableName);
      if (!stored) throw new Error(`The cursor secret in ${tableName} was created and is gone.`, { cause: error });
      return stored.secrets;
    }
  };
  const secrets = refreshing({
    name: `the cursor secret in ${tableName}`,
    ttlMs,
    maxStaleMs: ttlMs + DEFAULT_GRACE_MS,
    now,
    load: async () => (await readSecrets(documents, tableName))?.secrets ?? (await create()),
  });
  return async (deadline) => keyringAt(await unavailableAs503(secrets(deadline)), now());
}

/** What a rotation did: the new secret's id and when it signs; the replaced one's id and when it retires. */
export interface Rotation {
  id: string;
  activeFrom: number;
  replaced: { id: string; retiresAt: number };
}

/** A rotation refused because the last one has not taken effect yet (its secret is not signing). */
export class RotationUnderWay extends Error {}

/**
 * Rotates the cursor secret at `at` (epoch ms): one conditional write, so two rotations at once
 * cannot both succeed. Throws RotationUnderWay while the previous rotation's secret is not yet active.
 */
export async function rotateCursorSecret({ documents, tableName }: StoreTable, at: number): Promise<Rotation> {
  const item = await readItem(documents, tableName);
  if (!item)
    throw new Error(`There is no cursor secret in ${tableName} yet: listPets creates one when it first needs it.`);
  const stored = secretsOf(item, tableName);
  const pending = stored.secrets.find((each) => each.activeFrom > at);
  if (pending) {
    throw new RotationUnderWay(
      `the secret ${pending.id} of the last rotation signs only from ${new Date(pending.activeFrom).toISOString()}; rotate after that.`,
    );
  }
  const { signing } = keyringAt(stored.secrets, at);
  const activeFrom = at + CURSOR_SECRET_PROPAGATION_MS;
  const retiresAt = activeFrom + CURSOR_SECRET_OVERLAP_MS;
  const id = randomBytes(4).toString('hex');
  const kept = stored.secrets
    .filter((each) => each.retiresAt === undefined || at < each.retiresAt)
    .map((each) => (each.id === signing.id ? { ...each, retiresAt } : each));
  // Conditional on the item being as read (its last rotation, or none): of two rotations at once, one fails.
  const unchanged: Pick<
    PutCommandInput,
    'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'
  > = stored.listed
    ? {
        ConditionExpression: '#rotatedAt = :rotatedAt',
        ExpressionAttributeNames: { '#rotatedAt': 'rotatedAt' },
        ExpressionAttributeValues: { ':rotatedAt': item.rotatedAt },
      }
    : {
        ConditionExpression: 'attribute_exists(#pk) AND attribute_not_exists(#secrets)',
        ExpressionAttributeNames: { '#pk': controlTable.partitionKey.name, '#secrets': 'secrets' },
      };
  await documents.send(
    new PutCommand({
      TableName: tableName,
      Item: {
        ...item,
        secrets: [...kept, { id, value: newSecretValue(), activeFrom }],
        rotatedAt: new Date(at).toISOString(),
      },
      ...unchanged,
    }),
  );
  return { id, activeFrom, replaced: { id: signing.id, retiresAt } };
}

/** The codec listPets signs with: the configured secret (local use), else the control table's. */
export function cursorCodecFor({
  cursorSecret,
  control,
}: {
  cursorSecret?: string | undefined;
  control: StoreTable;
}): CursorCodec {
  return new CursorCodec(cursorSecret ? fixedSecret(cursorSecret) : controlTableCursorSecret(control));
}
