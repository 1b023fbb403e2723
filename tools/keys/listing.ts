/**
 * `keys list` and `keys revoke`. The list shows, per key, its id, scope and daily create ceiling
 * (lib/domain/keyScope.ts), creation, age, expiry and last use (as the key authorizer records it:
 * lib/store/keyUses.ts) and description; never a key or a digest.
 */
import { DeleteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { gatewayKeyName } from '../../infra/names.ts';
import { KEY_USE_RECORD_INTERVAL_MS, MAX_KEY_LIFETIME_MS } from '../../lib/domain/keyLifetime.ts';
import type { Stage } from '../../lib/domain/stages.ts';
import { expiryOf, keyItemKey, parseKeyItem, readKeyItems } from '../../lib/store/controlTableKeys.ts';
import { controlTable } from '../../lib/store/table.ts';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '../../infra/authorizerCache.ts';
import { TAKES_EFFECT, describeDuration, describeLifetime } from './commandLine.ts';
import { KeysError, errorName, type GatewaySide } from './stage.ts';

const UNREADABLE = '(unreadable item: ignored by the service)';

/** "3d", "5h", "12m": how long ago (or ahead) `ms` is, in its largest whole unit. */
function shortSpan(ms: number): string {
  const minutes = Math.floor(Math.abs(ms) / 60_000);
  if (minutes >= 2 * 24 * 60) return `${Math.floor(minutes / (24 * 60))}d`;
  if (minutes >= 120) return `${Math.floor(minutes / 60)}h`;
  return `${minutes}m`;
}

interface Row {
  keyId: string;
  scope: string;
  created: string;
  age: string;
  expires: string;
  lastUsed: string;
  description: string;
}

export async function list(
  client: DynamoDBDocumentClient,
  stage: Stage,
  table: string,
  now: Date,
  out: (line: string) => void,
): Promise<void> {
  const items = await readKeyItems(client, table);
  if (items.length === 0) return out(`No API keys for ${stage} (${table}).`);
  const at = now.getTime();
  const rows: Row[] = items
    .map((item) => {
      // Only dates and the description are taken from the item: the digest is never printed.
      const record = parseKeyItem(item);
      const keyId = String(item[controlTable.sortKey.name]);
      if (!record)
        return { keyId, scope: '', created: UNREADABLE, age: '', expires: '', lastUsed: '', description: '' };
      const expiry = expiryOf(record);
      const used = record.lastUsedAt === undefined ? undefined : Date.parse(record.lastUsedAt);
      return {
        keyId,
        scope: record.scope === 'read' ? 'read' : `write ${record.createsPerDay}/day`,
        created: record.createdAt,
        age: shortSpan(at - Date.parse(record.createdAt)),
        expires: `${new Date(expiry).toISOString().slice(0, 16)}Z ${expiry > at ? `(in ${shortSpan(expiry - at)})` : '(EXPIRED)'}${record.expiresAt === undefined ? '*' : ''}`,
        lastUsed: used === undefined ? 'never' : `${shortSpan(at - used)} ago`,
        description: record.description ?? '',
      };
    })
    .sort((a, b) => a.created.localeCompare(b.created) || a.keyId.localeCompare(b.keyId));
  const header: Row = {
    keyId: 'KEY ID',
    scope: 'SCOPE',
    created: 'CREATED',
    age: 'AGE',
    expires: 'EXPIRES',
    lastUsed: 'LAST USED',
    description: 'DESCRIPTION',
  };
  const columns = ['keyId', 'scope', 'created', 'age', 'expires', 'lastUsed'] as const;
  const widths = Object.fromEntries(
    columns.map((column) => [column, Math.max(...[header, ...rows].map((row) => row[column].length))]),
  );
  const line = (row: Row) =>
    [...columns.map((column) => row[column].padEnd(widths[column]!)), row.description].join('  ').trimEnd();
  out(`${rows.length} API key${rows.length === 1 ? '' : 's'} for ${stage} (${table}):`);
  out(line(header));
  for (const row of rows) out(line(row));
  out(
    `LAST USED is when the key authorizer last recorded a use: at most once every ${describeDuration(KEY_USE_RECORD_INTERVAL_MS)}, ` +
      `and a request may be answered from its ${AUTHORIZER_CACHE_TTL_SECONDS / 60}-minute cache first, so up to ${describeDuration(KEY_USE_RECORD_INTERVAL_MS + AUTHORIZER_CACHE_TTL_SECONDS * 1000)} late.`,
  );
  out('SCOPE: read calls only the GET operations; write N/day calls every one and creates at most N pets per UTC day.');
  if (rows.some((row) => row.expires.endsWith('*')))
    out(`* created before keys expired: it expires ${describeLifetime(MAX_KEY_LIFETIME_MS)} after its creation.`);
}

export async function revoke(
  client: DynamoDBDocumentClient,
  { stage, table, keyId, gateway }: { stage: Stage; table: string; keyId: string; gateway: GatewaySide | undefined },
  out: (line: string) => void,
): Promise<void> {
  // The API Gateway key first: without it the gateway refuses the key (403) at once, cache or not.
  const removed = gateway ? await gateway.keys.remove(gatewayKeyName(stage, keyId), gateway.planId) : 0;
  try {
    await client.send(
      new DeleteCommand({
        TableName: table,
        Key: keyItemKey(keyId),
        ConditionExpression: 'attribute_exists(#sk)',
        ExpressionAttributeNames: { '#sk': controlTable.sortKey.name },
      }),
    );
  } catch (error) {
    if (errorName(error) !== 'ConditionalCheckFailedException') throw error;
    if (removed > 0)
      return out(
        `Revoked API key ${keyId} for ${stage}: its API Gateway API key is deleted (its control-table item was already gone).`,
      );
    throw new KeysError(
      `revoke: there is no key ${keyId} for ${stage} (in ${table}); nothing was revoked (npm run keys -- list --stage ${stage} shows the keys).`,
    );
  }
  out(`Revoked API key ${keyId} for ${stage}. The service stops accepting it ${TAKES_EFFECT}.`);
}
