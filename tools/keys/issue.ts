/**
 * `keys create` and `keys rotate`: a new key issued as a control-table item holding its digest and
 * expiry (lib/store/controlTableKeys.ts) and, against AWS, an API Gateway API key in the stage's
 * usage plan; shown once (./delivery.ts). A key has a scope and a daily create ceiling
 * (lib/domain/keyScope.ts): given, else create's defaults. `rotate` issues the successor of a key, with its
 * description, and its scope and ceiling unless given, then shortens the old key's life to at most ROTATION_OVERLAP_MS from now: both work
 * in between, and the old one answers 401 after, as an unknown key does.
 */
import { randomBytes } from 'node:crypto';
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { apiKeyTags, gatewayKeyName } from '../../infra/names.ts';
import { digestKey } from '../../lib/domain/apiKeys.ts';
import { ROTATION_OVERLAP_MS } from '../../lib/domain/keyLifetime.ts';
import { DEFAULT_CREATES_PER_DAY, DEFAULT_KEY_SCOPE, type KeyScope } from '../../lib/domain/keyScope.ts';
import type { Stage } from '../../lib/domain/stages.ts';
import { expiryOf, keyItem, keyItemKey, parseKeyItem, type ApiKeyRecord } from '../../lib/store/controlTableKeys.ts';
import { controlTable } from '../../lib/store/table.ts';
import { TAKES_EFFECT, describeLifetime } from './commandLine.ts';
import type { KeyDelivery } from './delivery.ts';
import { KeysError, describeError, errorName, type GatewaySide } from './stage.ts';

const CREATE_ATTEMPTS = 3;

/** A new key and its id, from node:crypto's CSPRNG. */
export function generateApiKey(): { keyId: string; key: string } {
  const keyId = randomBytes(6).toString('hex');
  return { keyId, key: `psk_${keyId}_${randomBytes(32).toString('base64url')}` };
}

/** Where a command issues keys, and how it answers. */
export interface IssueContext {
  client: DynamoDBDocumentClient;
  stage: Stage;
  table: string;
  gateway: GatewaySide | undefined;
  now: Date;
  out: (line: string) => void;
}

export interface NewKey {
  lifetimeMs: number;
  description: string | undefined;
  delivery: KeyDelivery;
  /** What the key may call; undefined: DEFAULT_KEY_SCOPE (create), the old key's (rotate). */
  scope: KeyScope | undefined;
  /** Pets it may create per UTC day; undefined: DEFAULT_CREATES_PER_DAY (create), the old key's (rotate). */
  createsPerDay: number | undefined;
}

/** A new key's limits, decided. */
interface KeyLimits {
  scope: KeyScope;
  createsPerDay: number;
}

const instant = (ms: number) => new Date(ms).toISOString();

export async function create(context: IssueContext, key: NewKey): Promise<void> {
  const issued = await issue(context, {
    ...key,
    scope: key.scope ?? DEFAULT_KEY_SCOPE,
    createsPerDay: key.createsPerDay ?? DEFAULT_CREATES_PER_DAY,
  });
  announce(
    context,
    issued,
    key,
    `Created API key ${issued.keyId} for ${context.stage}${key.description === undefined ? '' : ` (${key.description})`}`,
  );
}

/** Issues the successor of `keyId`, then shortens the old key's life; refuses a key that is gone or expired. */
export async function rotate(context: IssueContext, keyId: string, key: Omit<NewKey, 'description'>): Promise<void> {
  const { client, stage, table, now } = context;
  const found = (await client.send(new GetCommand({ TableName: table, Key: keyItemKey(keyId), ConsistentRead: true })))
    .Item;
  const old = found && parseKeyItem(found);
  if (!found) throw new KeysError(`rotate: there is no key ${keyId} for ${stage} (in ${table}); nothing was issued.`);
  if (!old)
    throw new KeysError(
      `rotate: the item of key ${keyId} is unreadable (the service ignores it); revoke it and create a new key.`,
    );
  const oldExpiry = expiryOf(old);
  if (oldExpiry <= now.getTime())
    throw new KeysError(
      `rotate: key ${keyId} expired at ${instant(oldExpiry)}; nothing was issued: create a new key instead.`,
    );
  const scope = key.scope ?? old.scope;
  if (scope === 'read' && key.createsPerDay !== undefined)
    throw new KeysError(
      `rotate: key ${keyId} is a read key, which creates nothing: --creates-per-day is for write keys.`,
    );
  const issued = await issue(context, {
    ...key,
    description: old.description,
    scope,
    createsPerDay: key.createsPerDay ?? old.createsPerDay,
  });
  announce(
    context,
    issued,
    key,
    `Issued API key ${issued.keyId} for ${stage}, the successor of ${keyId}${old.description === undefined ? '' : ` (${old.description})`}`,
  );
  const until = Math.min(oldExpiry, now.getTime() + ROTATION_OVERLAP_MS);
  if (until < oldExpiry) await shortenLife(context, old, until);
  context.out(
    `The old key ${keyId} keeps working until ${instant(until)} (${until < oldExpiry ? `shortened from ${instant(oldExpiry)}` : 'its own expiry, not lengthened'}), ` +
      `then answers 401. Revoke it sooner, once its holder has switched: npm run keys -- revoke ${keyId} --stage ${stage}`,
  );
}

/** Writes the old key's new expiry, only over the item `rotate` read (same digest). */
async function shortenLife({ client, table, stage }: IssueContext, old: ApiKeyRecord, until: number): Promise<void> {
  try {
    await client.send(
      new UpdateCommand({
        TableName: table,
        Key: keyItemKey(old.keyId),
        UpdateExpression: 'SET expiresAt = :until',
        ConditionExpression: 'attribute_exists(#sk) AND sha256 = :sha256',
        ExpressionAttributeNames: { '#sk': controlTable.sortKey.name },
        ExpressionAttributeValues: { ':until': instant(until), ':sha256': old.sha256 },
      }),
    );
  } catch (error) {
    throw new KeysError(
      `rotate: the successor is issued (above), but the old key ${old.keyId}'s expiry could not be shortened (${describeError(error)}): ` +
        `it still expires ${instant(expiryOf(old))}; revoke it once its holder has switched (npm run keys -- revoke ${old.keyId} --stage ${stage}).`,
    );
  }
}

interface Issued extends KeyLimits {
  keyId: string;
  key: string;
  expiresAt: number;
}

/** The item (a fresh id when one is taken), then the usage plan's API key. */
async function issue(
  context: IssueContext,
  { lifetimeMs, description, scope, createsPerDay }: Omit<NewKey, 'delivery' | keyof KeyLimits> & KeyLimits,
): Promise<Issued> {
  const { client, table, now } = context;
  const expiresAt = now.getTime() + lifetimeMs;
  for (let attempt = 1; ; attempt++) {
    const { keyId, key } = generateApiKey();
    try {
      await client.send(
        new PutCommand({
          TableName: table,
          Item: keyItem({
            keyId,
            sha256: digestKey(key).toString('hex'),
            createdAt: now.toISOString(),
            expiresAt: instant(expiresAt),
            description,
            scope,
            createsPerDay,
          }),
          ConditionExpression: 'attribute_not_exists(#sk)',
          ExpressionAttributeNames: { '#sk': controlTable.sortKey.name },
        }),
      );
    } catch (error) {
      // A 48-bit id collides almost never; when it does, draw a new key rather than overwrite one.
      if (errorName(error) === 'ConditionalCheckFailedException' && attempt < CREATE_ATTEMPTS) continue;
      throw error;
    }
    await addToUsagePlan(context, { keyId, key, description });
    return { keyId, key, expiresAt, scope, createsPerDay };
  }
}

/** What `create` and `rotate` print: the key (or where it went), its expiry, how it takes effect, its limits. */
function announce(
  { stage, gateway, out, now }: IssueContext,
  { keyId, key, expiresAt, scope, createsPerDay }: Issued,
  { lifetimeMs, delivery }: Pick<NewKey, 'lifetimeMs' | 'delivery'>,
  headline: string,
): void {
  out(`${headline}; it expires ${instant(expiresAt)} (${describeLifetime(lifetimeMs)} from ${now.toISOString()}).`);
  out(
    scope === 'read'
      ? 'Its scope: read (the GET operations only; createPet answers it 403).'
      : `Its scope: write (every operation), at most ${createsPerDay} pets created per UTC day (then 429 until 00:00 UTC).`,
  );
  for (const line of delivery.deliver(key)) out(line);
  out('It cannot be shown again: only its SHA-256 digest is stored, so it cannot be recovered, only revoked.');
  out(`It is accepted ${TAKES_EFFECT}. To revoke it: npm run keys -- revoke ${keyId} --stage ${stage}`);
  out(
    gateway
      ? `Its limits: API Gateway API key ${gatewayKeyName(stage, keyId)} (value: the key's SHA-256 digest) in usage plan ${gateway.planId}.`
      : 'Offline (--endpoint): no API Gateway API key was made; the deployed runner puts every key under the usage plan.',
  );
}

/**
 * The key's API Gateway API key in the stage's usage plan; when that fails the item is deleted again,
 * since a key outside the plan would only ever be answered 403.
 */
async function addToUsagePlan(
  { client, stage, table, gateway }: IssueContext,
  { keyId, key, description }: { keyId: string; key: string; description: string | undefined },
): Promise<void> {
  if (!gateway) return;
  try {
    await gateway.keys.add(gateway.planId, {
      name: gatewayKeyName(stage, keyId),
      value: digestKey(key).toString('hex'),
      description,
      tags: apiKeyTags(stage),
    });
  } catch (error) {
    await client.send(new DeleteCommand({ TableName: table, Key: keyItemKey(keyId) }));
    throw new KeysError(
      `could not add the key to the ${stage} usage plan (${describeError(error)}); nothing was created.`,
    );
  }
}
