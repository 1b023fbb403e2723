/**
 * When each API key was last used, written to its control-table item (`lastUsedAt`) by the key
 * authorizer (lib/http/authorizer.ts) at a bounded cost: a sandbox tries at most once per key per
 * KEY_USE_RECORD_INTERVAL_MS (lib/domain/keyLifetime.ts), and the update is conditional on the
 * item's `lastUsedAt` being older than that (or absent) and on the item still existing. However many
 * requests and sandboxes there are, an item is written at most once per interval, each sandbox costs
 * at most one write unit per key per interval, and a revoked key's item is never created again.
 * Only the authorizer records uses (its role alone may write `lastUsedAt`); `npm run keys -- list`
 * shows them. A use is recorded within the authorizer's cache TTL of the request that made it.
 */
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { KEY_USE_RECORD_INTERVAL_MS } from '../domain/keyLifetime.ts';
import { warn } from '../domain/log.ts';
import { LAST_USED_ATTRIBUTE, keyItemKey } from './controlTableKeys.ts';
import type { Deadline } from '../domain/deadline.ts';
import { abortAt } from './deadline.ts';
import { controlTable } from './table.ts';

export class KeyUses {
  readonly #triedAt = new Map<string, number>();

  constructor(
    readonly documents: DynamoDBDocumentClient,
    readonly tableName: string,
    readonly now: () => number = Date.now,
  ) {}

  /** Notes a use of `keyId`, waiting no longer than `deadline`. Never throws: a failure is a warning, not a refused request. */
  async record(keyId: string, deadline?: Deadline): Promise<void> {
    const at = this.now();
    const tried = this.#triedAt.get(keyId);
    if (tried !== undefined && at - tried < KEY_USE_RECORD_INTERVAL_MS) return;
    this.#triedAt.set(keyId, at);
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyItemKey(keyId),
          UpdateExpression: 'SET #used = :at',
          ConditionExpression: 'attribute_exists(#sk) AND (attribute_not_exists(#used) OR #used <= :since)',
          ExpressionAttributeNames: { '#used': LAST_USED_ATTRIBUTE, '#sk': controlTable.sortKey.name },
          ExpressionAttributeValues: {
            ':at': new Date(at).toISOString(),
            ':since': new Date(at - KEY_USE_RECORD_INTERVAL_MS).toISOString(),
          },
        }),
        abortAt(deadline),
      );
    } catch (error) {
      // Another sandbox recorded it within the interval, or the key was revoked meanwhile: nothing to do.
      if ((error as { name?: string } | null)?.name === 'ConditionalCheckFailedException') return;
      warn(`Could not record the use of API key ${keyId} in ${this.tableName}.`, error);
    }
  }
}
