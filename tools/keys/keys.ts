/**
 * API-key management: `npm run keys -- <command>`; `npm run keys -- --help` tells how.
 *
 * Keys are stored as their SHA-256 digest only, one control-table item per key (partition
 * `apikeys`, sort key the key id), which is what `ControlTableApiKeys` reads. A key is
 * `psk_<keyId>_<secret>`: the id (12 hex characters) names its item, so it can be revoked;
 * the secret is 32 random bytes, base64url, so the whole key is a valid RFC 6750 bearer token.
 *
 * The table is `--table`, else $CONTROL_TABLE_NAME, else the one the stage's stack names in its
 * ControlTableName output (CloudFormation DescribeStacks: CloudFormation names the table, see
 * infra/constructs/storage.ts). AWS credentials and region come from the usual places (environment,
 * profile, SSO; the region as the CDK CLI resolves it, else us-east-1); `--endpoint` or
 * `AWS_ENDPOINT_URL_DYNAMODB` points it at another DynamoDB endpoint, such as dynalite.
 * Exit codes: 0 done, 1 failed, 2 bad usage.
 *
 * Against AWS, `create` and `revoke` also create and delete the key's API Gateway API key (value:
 * the key's SHA-256 hex digest) in the stage's usage plan (the stack's UsagePlanId output): that is
 * what gives each key its own throttle and quota (./usagePlanKeys.ts). Offline (`--endpoint`) they
 * do not: the deployed runner does not model which keys a usage plan holds.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { CloudFormationClient, DescribeStacksCommand, type DescribeStacksCommandOutput } from '@aws-sdk/client-cloudformation';
import { DeleteCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CONTROL_TABLE_OUTPUT, USAGE_PLAN_OUTPUT, gatewayKeyName, stackName } from '../../infra/names.ts';
import { API_KEY_FORMAT, digestKey } from '../../lib/domain/apiKeys.ts';
import { KEY_REVOCATION_BOUND_MS, keyItem, parseKeyItem, readKeyItems } from '../../lib/store/controlTableKeys.ts';
import { CURSOR_SECRET_OVERLAP_MS, CURSOR_SECRET_PROPAGATION_MS, RotationUnderWay, rotateCursorSecret } from '../../lib/store/cursorSecret.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { STAGES, isStage, type Stage } from '../../lib/domain/stages.ts';
import { controlKeys, controlTable } from '../../lib/store/table.ts';
import { apiGatewayUsagePlanKeys, type UsagePlanKeys } from './usagePlanKeys.ts';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

const KEY_ID = /^[0-9a-f]{12}$/;
export { API_KEY_FORMAT };
const MAX_DESCRIPTION = 1024;
const CREATE_ATTEMPTS = 3;

/** When a created or revoked key takes effect in every instance: docs/operating.md ("API keys") states the same words. */
export const TAKES_EFFECT = `within ${describeDuration(KEY_REVOCATION_BOUND_MS)}`;

/** "5 minutes 30 seconds", "1 minute", "45 seconds". */
export function describeDuration(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  const part = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  return [minutes ? part(minutes, 'minute') : '', seconds || !minutes ? part(seconds, 'second') : ''].filter(Boolean).join(' ');
}

export const USAGE = `Usage: npm run keys -- <command> [options]

Manages the Pet Store API keys kept in a stage's control table (partition "apikeys").

Commands:
  create --stage <stage> [--description <text>]   Issue a new key. It is printed once; only its
                                                  SHA-256 digest is stored.
  list --stage <stage>                            Show key ids, creation dates and descriptions.
  revoke <keyId> --stage <stage>                  Delete a key.
  rotate-cursor-secret --stage <stage>            Replace the secret that signs page cursors: the new
                                                  one signs ${describeDuration(CURSOR_SECRET_PROPAGATION_MS)} later, once every
                                                  instance has read it; cursors of the old one keep
                                                  working ${describeDuration(CURSOR_SECRET_OVERLAP_MS)} more.

Options:
  --stage <stage>        ${STAGES.join(' or ')} (required)
  --description <text>   What the key is for, for example who holds it (create only).
  --table <name>         The control table (default: $CONTROL_TABLE_NAME, else the ${CONTROL_TABLE_OUTPUT}
                         output of the stage's stack, ${stackName('staging')} or ${stackName('production')}).
  --endpoint <url>       DynamoDB endpoint to use (default: $AWS_ENDPOINT_URL_DYNAMODB, else AWS's).
  -h, --help             Show this help.

AWS credentials come from the usual places (environment, profile, SSO); the region is the one the
CDK CLI deploys to: AWS_REGION, else AWS_DEFAULT_REGION, else the profile's, else us-east-1.
The service caches keys: a created or revoked key takes effect ${TAKES_EFFECT}.
Exit codes: 0 done, 1 failed, 2 bad usage.`;

/** What reads the stage stack's outputs: a CloudFormation client, or a stub in tests. */
export interface StackOutputsReader {
  send(command: DescribeStacksCommand): Promise<DescribeStacksCommandOutput>;
}

export interface KeysIo {
  /** When not given, one is made with the default credentials and region (and closed afterwards). */
  client?: DynamoDBDocumentClient;
  /**
   * Asked once (DescribeStacks) for the table when neither --table nor CONTROL_TABLE_NAME names it.
   * When not given, one is made like `client`.
   */
  stacks?: StackOutputsReader;
  /**
   * The API Gateway side of create and revoke. When not given, one is made like `client`, unless
   * the DynamoDB side is not AWS's: `--endpoint` given, or `client` given (without this).
   */
  usagePlanKeys?: UsagePlanKeys;
  out: (line: string) => void;
  err: (line: string) => void;
  env?: Record<string, string | undefined>;
  now?: () => Date;
}

class UsageError extends Error {}
/** A failure explained in one line of its own (no "failed:" prefix). */
class KeysError extends Error {}

type Command =
  | { name: 'help' }
  | { name: 'create'; stage: Stage; description: string | undefined }
  | { name: 'list'; stage: Stage }
  | { name: 'revoke'; stage: Stage; keyId: string }
  | { name: 'rotate-cursor-secret'; stage: Stage };

interface Invocation {
  command: Command;
  /** The table given (--table or CONTROL_TABLE_NAME); otherwise the stack's output names it. */
  table?: string;
  endpoint?: string;
}

/** A new key and its id, from node:crypto's CSPRNG. */
export function generateApiKey(): { keyId: string; key: string } {
  const keyId = randomBytes(6).toString('hex');
  return { keyId, key: `psk_${keyId}_${randomBytes(32).toString('base64url')}` };
}

/** Runs one command; resolves to the exit code. Never throws. */
export async function runKeys(argv: readonly string[], io: KeysIo): Promise<number> {
  const env = io.env ?? process.env;
  let invocation: Invocation;
  try {
    invocation = parseCommand(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`keys: ${error.message}`);
    io.err('Run "npm run keys -- --help" for usage.');
    return EXIT_USAGE;
  }
  const { command, endpoint } = invocation;
  if (command.name === 'help') {
    io.out(USAGE);
    return EXIT_OK;
  }

  const offline = endpoint !== undefined || (io.client !== undefined && io.usagePlanKeys === undefined);
  const usesGateway = (command.name === 'create' || command.name === 'revoke') && !offline;
  const needsRegion = !io.client || (!invocation.table && !io.stacks) || (usesGateway && !io.usagePlanKeys);
  const region = needsRegion ? await awsRegion(env) : undefined;
  let client: DynamoDBDocumentClient | undefined;
  try {
    const outputs = invocation.table && !usesGateway ? {} : await stackOutputsOf(command.stage, io.stacks, region);
    const table = invocation.table ?? requiredOutput(command.stage, outputs, CONTROL_TABLE_OUTPUT, 'is it still being created?); give --table.');
    const gateway = usesGateway ? gatewaySide(command.stage, outputs, io, region) : undefined;
    client = io.client ?? createDocumentClient({ region, endpoint });
    switch (command.name) {
      case 'create':
        return await create(client, { ...command, table, gateway }, io);
      case 'list':
        return await list(client, { ...command, table }, io);
      case 'revoke':
        return await revoke(client, { ...command, table, gateway }, io);
      case 'rotate-cursor-secret':
        return await rotate(client, { ...command, table }, io);
      default:
        return command satisfies never;
    }
  } catch (error) {
    io.err(
      error instanceof KeysError ? `keys: ${error.message}`
      : errorName(error) === 'CredentialsProviderError' ? `keys: ${noCredentials(error as Error)}`
      : `keys ${command.name} failed: ${describeError(error)}`,
    );
    return EXIT_FAILED;
  } finally {
    if (!io.client) client?.destroy();
  }
}

/** No AWS credentials anywhere the SDK looks: the two ways on, in one line. */
const noCredentials = (error: Error) =>
  `no AWS credentials (${error.message}). For a deployed stage, log in to its account (aws sso login --profile <profile>, ` +
  'then AWS_PROFILE=<profile> npm run keys -- ...); for a stage run offline, give --table and --endpoint (npm run start:deployed prints them).';

/** The region as the CDK CLI resolves it: AWS_REGION, AWS_DEFAULT_REGION, the profile's, else us-east-1. */
async function awsRegion(env: Record<string, string | undefined>): Promise<string> {
  const fromEnvironment = env.AWS_REGION || env.AWS_DEFAULT_REGION;
  if (fromEnvironment) return fromEnvironment;
  const fromProfile = await new CloudFormationClient({}).config.region().catch(() => undefined);
  return fromProfile || 'us-east-1';
}

/** Where create and revoke put a key's API Gateway API key: the stage's usage plan. */
interface GatewaySide {
  keys: UsagePlanKeys;
  planId: string;
}

function gatewaySide(stage: Stage, outputs: Record<string, string>, io: KeysIo, region: string | undefined): GatewaySide {
  const planId = requiredOutput(stage, outputs, USAGE_PLAN_OUTPUT, 'deploy the stack first: its usage plan gives each key its limits).');
  return { keys: io.usagePlanKeys ?? apiGatewayUsagePlanKeys({ region: region ?? 'us-east-1' }), planId };
}

function requiredOutput(stage: Stage, outputs: Record<string, string>, name: string, hint: string): string {
  const value = outputs[name];
  if (!value) throw new KeysError(`the stack ${stackName(stage)} has no ${name} output (${hint}`);
  return value;
}

/** The stage stack's outputs: one DescribeStacks. */
async function stackOutputsOf(stage: Stage, given: StackOutputsReader | undefined, region: string | undefined): Promise<Record<string, string>> {
  const name = stackName(stage);
  const stacks = given ?? new CloudFormationClient({ region });
  let output: DescribeStacksCommandOutput;
  try {
    output = await stacks.send(new DescribeStacksCommand({ StackName: name }));
  } catch (error) {
    if (errorName(error) === 'ValidationError' && /does not exist/.test(String((error as Error).message))) {
      throw new KeysError(
        `there is no stack ${name}${region ? ` in ${region}` : ''} to find the ${stage} control table in: deploy it ` +
          '(docs/deploying.md "Deploy"), point AWS_REGION or AWS_PROFILE at its account and region, or give --table.',
      );
    }
    throw error;
  } finally {
    if (!given) (stacks as CloudFormationClient).destroy();
  }
  return Object.fromEntries((output.Stacks?.[0]?.Outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue ?? '']));
}

function parseCommand(argv: readonly string[], env: Record<string, string | undefined>): Invocation {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        stage: { type: 'string' },
        description: { type: 'string' },
        endpoint: { type: 'string' },
        table: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  const [name, ...rest] = positionals;
  if (values.help || name === 'help') return { command: { name: 'help' } };
  if (name === undefined) throw new UsageError('a command is required: create, list, revoke or rotate-cursor-secret.');
  if (name !== 'create' && name !== 'list' && name !== 'revoke' && name !== 'rotate-cursor-secret') {
    throw new UsageError(`unknown command "${name}"; the commands are create, list, revoke and rotate-cursor-secret.`);
  }

  if (values.stage === undefined) throw new UsageError(`${name} needs --stage ${STAGES.join('|')}.`);
  if (!isStage(values.stage)) throw new UsageError(`--stage must be ${STAGES.join(' or ')}, not "${values.stage}".`);
  const stage = values.stage;
  if (values.description !== undefined && name !== 'create') throw new UsageError('--description is only for create.');

  const endpoint = values.endpoint ?? (env.AWS_ENDPOINT_URL_DYNAMODB || undefined);
  const table = values.table?.trim() || env.CONTROL_TABLE_NAME || undefined;
  if (table !== undefined && !/^[A-Za-z0-9_.-]{3,255}$/.test(table)) throw new UsageError(`"${table}" is not a DynamoDB table name.`);
  if (endpoint !== undefined && !URL.canParse(endpoint)) throw new UsageError(`the endpoint "${endpoint}" is not a URL.`);

  let command: Command;
  if (name === 'revoke') {
    const [keyId, ...extra] = rest;
    if (keyId === undefined) throw new UsageError('revoke needs the id of the key, as create and list show it.');
    if (extra.length > 0) throw new UsageError(`revoke takes one key id, not ${rest.length}.`);
    if (!KEY_ID.test(keyId)) {
      const hint = API_KEY_FORMAT.test(keyId) ? ' Give only the id (the 12 characters after "psk_"), never the key.' : '';
      throw new UsageError(`"${API_KEY_FORMAT.test(keyId) ? 'psk_…' : keyId}" is not a key id (12 lowercase hex characters).${hint}`);
    }
    command = { name, stage, keyId };
  } else {
    if (rest.length > 0) throw new UsageError(`${name} takes no arguments besides options; got "${rest.join(' ')}".`);
    if (name === 'create') {
      const description = values.description?.trim() || undefined;
      if (description !== undefined && description.length > MAX_DESCRIPTION) {
        throw new UsageError(`--description must be at most ${MAX_DESCRIPTION} characters.`);
      }
      command = { name, stage, description };
    } else {
      command = { name, stage };
    }
  }
  return { command, ...(table === undefined ? {} : { table }), ...(endpoint === undefined ? {} : { endpoint }) };
}

type Client = DynamoDBDocumentClient;

async function create(
  client: Client,
  { stage, table, description, gateway }: { stage: Stage; table: string; description: string | undefined; gateway: GatewaySide | undefined },
  io: KeysIo,
) {
  const createdAt = (io.now?.() ?? new Date()).toISOString();
  for (let attempt = 1; ; attempt++) {
    const { keyId, key } = generateApiKey();
    try {
      await client.send(
        new PutCommand({
          TableName: table,
          Item: keyItem({ keyId, sha256: digestKey(key).toString('hex'), createdAt, description }),
          ConditionExpression: 'attribute_not_exists(#sk)',
          ExpressionAttributeNames: { '#sk': controlTable.sortKey.name },
        }),
      );
    } catch (error) {
      // A 48-bit id collides almost never; when it does, draw a new key rather than overwrite one.
      if (errorName(error) === 'ConditionalCheckFailedException' && attempt < CREATE_ATTEMPTS) continue;
      throw error;
    }
    await addToUsagePlan(client, { stage, table, keyId, key, description, gateway });
    io.out(`Created API key ${keyId} for ${stage}${description === undefined ? '' : ` (${description})`}.`);
    io.out('');
    io.out(`    ${key}`);
    io.out('');
    io.out('WARNING: copy this key now and hand it over through a secure channel.');
    io.out('It cannot be shown again: only its SHA-256 digest is stored, so it cannot be recovered, only revoked.');
    io.out(`It is accepted ${TAKES_EFFECT}. To revoke it: npm run keys -- revoke ${keyId} --stage ${stage}`);
    io.out(
      gateway
        ? `Its limits: API Gateway API key ${gatewayKeyName(stage, keyId)} (value: the key's SHA-256 digest) in usage plan ${gateway.planId}.`
        : 'Offline (--endpoint): no API Gateway API key was made; the deployed runner puts every key under the usage plan.',
    );
    return EXIT_OK;
  }
}

/**
 * The key's API Gateway API key in the stage's usage plan; when that fails the item is deleted again,
 * since a key outside the plan would only ever be answered 403.
 */
async function addToUsagePlan(
  client: Client,
  { stage, table, keyId, key, description, gateway }: { stage: Stage; table: string; keyId: string; key: string; description: string | undefined; gateway: GatewaySide | undefined },
): Promise<void> {
  if (!gateway) return;
  try {
    await gateway.keys.add(gateway.planId, { name: gatewayKeyName(stage, keyId), value: digestKey(key).toString('hex'), description });
  } catch (error) {
    await client.send(new DeleteCommand({ TableName: table, Key: { [controlTable.partitionKey.name]: controlKeys.apiKeys, [controlTable.sortKey.name]: keyId } }));
    throw new KeysError(`could not add the key to the ${stage} usage plan (${describeError(error)}); nothing was created.`);
  }
}

async function list(client: Client, { stage, table }: { stage: Stage; table: string }, io: KeysIo) {
  const items = await readKeyItems(client, table);
  if (items.length === 0) {
    io.out(`No API keys for ${stage} (${table}).`);
    return EXIT_OK;
  }
  const rows = items
    .map((item) => {
      // Only the creation date and description are taken from the item: the digest is never printed.
      const record = parseKeyItem(item);
      return {
        keyId: String(item[controlTable.sortKey.name]),
        created: record?.createdAt ?? '(unreadable item: ignored by the service)',
        description: typeof item.description === 'string' ? item.description : '',
      };
    })
    .sort((a, b) => a.created.localeCompare(b.created) || a.keyId.localeCompare(b.keyId));
  const idWidth = Math.max('KEY ID'.length, ...rows.map((row) => row.keyId.length));
  const createdWidth = Math.max('CREATED'.length, ...rows.map((row) => row.created.length));
  const line = (keyId: string, created: string, description: string) =>
    `${keyId.padEnd(idWidth)}  ${created.padEnd(createdWidth)}  ${description}`.trimEnd();
  io.out(`${rows.length} API key${rows.length === 1 ? '' : 's'} for ${stage} (${table}):`);
  io.out(line('KEY ID', 'CREATED', 'DESCRIPTION'));
  for (const row of rows) io.out(line(row.keyId, row.created, row.description));
  return EXIT_OK;
}

async function revoke(
  client: Client,
  { stage, table, keyId, gateway }: { stage: Stage; table: string; keyId: string; gateway: GatewaySide | undefined },
  io: KeysIo,
) {
  // The API Gateway key first: without it the gateway refuses the key (403) at once, cache or not.
  const removed = gateway ? await gateway.keys.remove(gatewayKeyName(stage, keyId)) : 0;
  try {
    await client.send(
      new DeleteCommand({
        TableName: table,
        Key: { [controlTable.partitionKey.name]: controlKeys.apiKeys, [controlTable.sortKey.name]: keyId },
        ConditionExpression: 'attribute_exists(#sk)',
        ExpressionAttributeNames: { '#sk': controlTable.sortKey.name },
      }),
    );
  } catch (error) {
    if (errorName(error) !== 'ConditionalCheckFailedException') throw error;
    if (removed > 0) {
      io.out(`Revoked API key ${keyId} for ${stage}: its API Gateway API key is deleted (its control-table item was already gone).`);
      return EXIT_OK;
    }
    io.err(`keys revoke: there is no key ${keyId} for ${stage} (in ${table}); nothing was revoked.`);
    io.err(`Run "npm run keys -- list --stage ${stage}" to see the keys.`);
    return EXIT_FAILED;
  }
  io.out(`Revoked API key ${keyId} for ${stage}. The service stops accepting it ${TAKES_EFFECT}.`);
  return EXIT_OK;
}

async function rotate(client: Client, { stage, table }: { stage: Stage; table: string }, io: KeysIo) {
  let rotation;
  try {
    rotation = await rotateCursorSecret({ documents: client, tableName: table }, (io.now?.() ?? new Date()).getTime());
  } catch (error) {
    if (error instanceof RotationUnderWay) throw new KeysError(`rotate-cursor-secret: ${error.message}`);
    if (errorName(error) === 'ConditionalCheckFailedException') throw new KeysError('rotate-cursor-secret: another rotation changed the secret just now; nothing was rotated.');
    throw error;
  }
  const instant = (ms: number) => new Date(ms).toISOString();
  io.out(`Rotated the cursor secret for ${stage}: secret ${rotation.id} signs cursors from ${instant(rotation.activeFrom)}.`);
  io.out(`Cursors signed by secret ${rotation.replaced.id} are accepted until ${instant(rotation.replaced.retiresAt)}.`);
  return EXIT_OK;
}

const errorName = (error: unknown): string | undefined => (error instanceof Error ? error.name : undefined);

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.message && error.message !== error.name ? `${error.name}: ${error.message}` : error.name;
}

