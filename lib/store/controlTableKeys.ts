/**
 * The deployed API-key store: one control-table item per key, partition `apikeys`, sort key the
 * key's id, holding `sha256` (hex digest of the key), `createdAt` (ISO date) and an optional
 * `description`. The plaintext key is never stored. The functions read the digests with one Query
 * through the DynamoDB client they already carry (no SSM client in the bundle), keep them, and
 * refresh them in the background (lib/store/cache.ts): a key issued or revoked with `npm run keys`
 * takes effect within minutes, without a redeploy, and no warm request waits for a refresh.
 */
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ApiKeyStore } from '../domain/apiKeys.ts';
import { warn } from '../domain/log.ts';
import { refreshing } from './cache.ts';
import { controlKeys, controlTable } from './table.ts';

/** How long digests are served without a refresh; the refresh itself runs in the background. */
export const DEFAULT_KEYS_TTL_MS = 5 * 60_000;
/** A container idle for longer re-reads the keys before answering (bounds a revoked key's life). */
export const DEFAULT_KEYS_MAX_STALE_MS = 60 * 60_000;

/** What a key's item holds besides its key. */
export interface ApiKeyRecord {
  keyId: string;
  /** Hex SHA-256 digest of the key (written lowercase). */
  sha256: string;
  /** ISO 8601 instant the key was created. */
  createdAt: string;
  description?: string | undefined;
}

const SHA256_HEX = /^[0-9a-f]{64}$/i;

/** The record an item holds, or undefined when it is not one. */
export function parseKeyItem(item: Record<string, unknown>): ApiKeyRecord | undefined {
  const { sk, sha256, createdAt, description } = item;
  if (typeof sk !== 'string' || typeof sha256 !== 'string' || !SHA256_HEX.test(sha256)) return undefined;
  if (typeof createdAt !== 'string' || Number.isNaN(Date.parse(createdAt))) return undefined;
  return { keyId: sk, sha256, createdAt, ...(typeof description === 'string' ? { description } : {}) };
}

/** The control-table item for a key. */
export const keyItem = ({ keyId, sha256, createdAt, description }: ApiKeyRecord) => ({
  [controlTable.partitionKey.name]: controlKeys.apiKeys,
  [controlTable.sortKey.name]: keyId,
  sha256,
  createdAt,
  ...(description === undefined ? {} : { description }),
});

/** Every key item, following LastEvaluatedKey to the end (one page holds about 5,000 keys). */
export async function readKeyItems(documents: DynamoDBDocumentClient, tableName: string): Promise<Record<string, unknown>[]> {
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
  maxStaleMs?: number;
  now?: () => number;
}

export class ControlTableApiKeys implements ApiKeyStore {
  readonly #digests: () => Promise<readonly Buffer[]>;

  constructor({ documents, tableName, ttlMs = DEFAULT_KEYS_TTL_MS, maxStaleMs = DEFAULT_KEYS_MAX_STALE_MS, now }: ControlTableApiKeysOptions) {
    const load = async (): Promise<readonly Buffer[]> => {
      const digests: Buffer[] = [];
      for (const item of await readKeyItems(documents, tableName)) {
        const record = parseKeyItem(item);
        // Id only: the value is not logged, even when malformed.
        if (record) digests.push(Buffer.from(record.sha256, 'hex'));
        else warn(`Ignoring API key item ${String(item.sk)} of ${tableName}: it has no valid sha256 and createdAt.`);
      }
      if (digests.length === 0) warn(`No API keys in ${tableName}: every request will be answered 401.`);
      return Object.freeze(digests);
    };
    this.#digests = refreshing({ name: `the API keys in ${tableName}`, load, ttlMs, maxStaleMs, ...(now ? { now } : {}) });
  }

  keyDigests(): Promise<readonly Buffer[]> {
    return this.#digests();
  }
}
