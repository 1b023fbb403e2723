/**
 * The deployed API-key store: one control-table item per key, partition `apikeys`, sort key the
 * key's id, holding `sha256` (hex digest of the key), `createdAt` and `expiresAt` (ISO dates; a key
 * created before keys expired has no `expiresAt`), its `scope` and `createsPerDay` (an item from
 * before them: lib/domain/keyScope.ts's defaults), an optional `description`, and `lastUsedAt`,
 * which the key authorizer writes (./keyUses.ts). The plaintext key is never stored. The functions read the digests with one Query
 * through the DynamoDB client they already carry (no SSM client in the bundle), keep them, and
 * refresh them (lib/store/cache.ts): a key issued or revoked with `npm run keys` takes effect within
 * `KEY_REVOCATION_BOUND_MS`, without a redeploy, on busy and idle instances alike. Each digest is
 * served with its item's sort key, the key's one id (logs, `keys list`, `keys revoke`).
 */
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ApiKeyStore, KeyDigest, KeyDigests } from '../domain/apiKeys.ts';
import type { Deadline } from '../domain/deadline.ts';
import { keyExpiry } from '../domain/keyLifetime.ts';
import {
  DEFAULT_CREATES_PER_DAY,
  DEFAULT_KEY_SCOPE,
  isCreatesPerDay,
  isKeyScope,
  type KeyScope,
} from '../domain/keyScope.ts';
import { warn } from '../domain/log.ts';
import { refreshing, type Refreshing } from './cache.ts';
import { controlKeys, controlTable } from './table.ts';

/** How long digests are served without a refresh. */
export const DEFAULT_KEYS_TTL_MS = 5 * 60_000;
/** After the TTL, how long digests are still served while a background refresh runs (busy instances). */
const KEYS_GRACE_MS = 30_000;
/**
 * The longest a revoked (or newly created) key goes unseen by any instance, counted from the
 * revocation: digests read before it are never served past this age; a request then waits for a
 * read, and is answered 503 when the table cannot be read. The keys CLI and docs/operating.md state it.
 */
export const KEY_REVOCATION_BOUND_MS = DEFAULT_KEYS_TTL_MS + KEYS_GRACE_MS;

/** What a key's item holds besides its key. */
export interface ApiKeyRecord {
  keyId: string;
  /** Hex SHA-256 digest of the key (written lowercase). */
  sha256: string;
  /** ISO 8601 instant the key was created. */
  createdAt: string;
  /** ISO 8601 instant the key stops working; none on a key created before keys expired (see `expiryOf`). */
  expiresAt?: string | undefined;
  description?: string | undefined;
  /** What the key may call; DEFAULT_KEY_SCOPE on an item without one. */
  scope: KeyScope;
  /** Pets it may create per UTC day; DEFAULT_CREATES_PER_DAY on an item without one. */
  createsPerDay: number;
  /** ISO 8601 instant the authorizer last recorded a use of the key (./keyUses.ts). */
  lastUsedAt?: string | undefined;
}

/** The attribute the authorizer writes, and the only one its role may write (infra/constructs/permissions.ts). */
export const LAST_USED_ATTRIBUTE = 'lastUsedAt';

const SHA256_HEX = /^[0-9a-f]{64}$/i;
const isInstant = (value: unknown): value is string => typeof value === 'string' && !Number.isNaN(Date.parse(value));

/**
 * The record an item holds, or undefined when it is not one (a `lastUsedAt` that is no instant is
 * left out). A scope or ceiling that is there but not one makes no record: the key is refused rather
 * than given more than its item says.
 */
export function parseKeyItem(item: Record<string, unknown>): ApiKeyRecord | undefined {
  const { sk, sha256, createdAt, expiresAt, description, [LAST_USED_ATTRIBUTE]: lastUsedAt } = item;
  const { scope = DEFAULT_KEY_SCOPE, createsPerDay = DEFAULT_CREATES_PER_DAY } = item;
  if (typeof sk !== 'string' || typeof sha256 !== 'string' || !SHA256_HEX.test(sha256)) return undefined;
  if (!isInstant(createdAt) || (expiresAt !== undefined && !isInstant(expiresAt))) return undefined;
  if (!isKeyScope(scope) || !isCreatesPerDay(createsPerDay)) return undefined;
  return {
    keyId: sk,
    sha256,
    createdAt,
    scope,
    createsPerDay,
    ...(expiresAt === undefined ? {} : { expiresAt }),
    ...(typeof description === 'string' ? { description } : {}),
    ...(isInstant(lastUsedAt) ? { lastUsedAt } : {}),
  };
}

/** When the key of `record` stops working (epoch ms): lib/domain/keyLifetime.ts's rule. */
export const expiryOf = (record: Pick<ApiKeyRecord, 'createdAt' | 'expiresAt'>): number =>
  keyExpiry(Date.parse(record.createdAt), record.expiresAt === undefined ? undefined : Date.parse(record.expiresAt));

/** The key of a key's item. */
export const keyItemKey = (keyId: string) => ({
  [controlTable.partitionKey.name]: controlKeys.apiKeys,
  [controlTable.sortKey.name]: keyId,
});

/** What a key's item is written from: its record, the scope and ceiling left out for their defaults. */
export type NewKeyRecord = Omit<ApiKeyRecord, 'lastUsedAt' | 'scope' | 'createsPerDay'> &
  Partial<Pick<ApiKeyRecord, 'scope' | 'createsPerDay'>>;

/** The control-table item for a key, as `npm run keys` writes it (never `lastUsedAt`: the authorizer's). */
export const keyItem = ({ keyId, sha256, createdAt, expiresAt, description, scope, createsPerDay }: NewKeyRecord) => ({
  ...keyItemKey(keyId),
  sha256,
  createdAt,
  ...(expiresAt === undefined ? {} : { expiresAt }),
  ...(description === undefined ? {} : { description }),
  ...(scope === undefined ? {} : { scope }),
  ...(createsPerDay === undefined ? {} : { createsPerDay }),
});

/** Every key item, following LastEvaluatedKey to the end (one page holds about 5,000 keys). */
export async function readKeyItems(
  documents: DynamoDBDocumentClient,
  tableName: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': controlTable.partitionKey.name },
        ExpressionAttributeValues: { ':pk': controlKeys.apiKeys },
        ExclusiveStartKey: startKey,
        // A strongly consistent read: a revocation acknowledged before the read began is in it.
        ConsistentRead: true,
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

export interface ControlTableApiKeysOptions {
  documents: DynamoDBDocumentClient;
  tableName: string;
  ttlMs?: number;
  /** The oldest digests ever served, from the start of their read (default `ttlMs` + `KEYS_GRACE_MS`). */
  maxStaleMs?: number;
  now?: () => number;
}

export class ControlTableApiKeys implements ApiKeyStore {
  readonly #digests: Refreshing<KeyDigests>;
  readonly maxStaleMs: number;

  constructor({
    documents,
    tableName,
    ttlMs = DEFAULT_KEYS_TTL_MS,
    maxStaleMs = ttlMs + KEYS_GRACE_MS,
    now,
  }: ControlTableApiKeysOptions) {
    const load = async (): Promise<KeyDigests> => {
      // Stamped before the read: a revocation acknowledged before this instant is in what it returns.
      const readAt = (now ?? Date.now)();
      const digests: KeyDigest[] = [];
      for (const item of await readKeyItems(documents, tableName)) {
        const record = parseKeyItem(item);
        // Id only: the value is not logged, even when malformed.
        if (record)
          digests.push({
            keyId: record.keyId,
            digest: Buffer.from(record.sha256, 'hex'),
            expiresAt: expiryOf(record),
            scope: record.scope,
            createsPerDay: record.createsPerDay,
          });
        else
          warn(
            `Ignoring API key item ${String(item.sk)} of ${tableName}: it has no valid sha256, createdAt, expiresAt, scope and createsPerDay.`,
          );
      }
      if (digests.length === 0) warn(`No API keys in ${tableName}: every request will be answered 401.`);
      return Object.freeze(Object.assign(digests, { readAt }));
    };
    this.maxStaleMs = Math.max(maxStaleMs, ttlMs);
    this.#digests = refreshing({
      name: `the API keys in ${tableName}`,
      load,
      ttlMs,
      maxStaleMs,
      ...(now ? { now } : {}),
    });
  }

  keyDigests(deadline?: Deadline): Promise<KeyDigests> {
    return this.#digests(deadline);
  }
}
