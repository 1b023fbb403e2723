/**
 * API-key management: `npm run keys -- <command>`; `npm run keys -- --help` tells how.
 *
 * Keys are stored as their SHA-256 digest only, one control-table item per key (partition
 * `apikeys`, sort key the key id), with its creation and expiry (lib/domain/keyLifetime.ts), which
 * is what `ControlTableApiKeys` reads. A key is `psk_<keyId>_<secret>`: the id (12 hex characters)
 * names its item, so it can be revoked; the secret is 32 random bytes, base64url, so the whole key
 * is a valid RFC 6750 bearer token.
 *
 * The table is `--table`, else $CONTROL_TABLE_NAME, else the one the stage's stack names in its
 * ControlTableName output (CloudFormation DescribeStacks: CloudFormation names the table, see
 * infra/constructs/storage.ts). AWS credentials and region come from the usual places (environment,
 * profile, SSO; the region as the CDK CLI resolves it, else us-east-1); `--endpoint` or
 * `AWS_ENDPOINT_URL_DYNAMODB` points it at another DynamoDB endpoint, such as dynalite.
 * `pets <keyId>` reads the stage's pets table instead (`--pets-table`, else the stack's TableName
 * output): the pets a key created, removed on request (./keyPets.ts).
 * Exit codes: 0 done, 1 failed, 2 bad usage; every mistake and failure is one line on stderr.
 *
 * Against AWS, `create`, `rotate` and `revoke` also create and delete the key's API Gateway API key
 * (value: the key's SHA-256 hex digest) in the stage's usage plan (the stack's UsagePlanId output):
 * that is what gives each key its own throttle and quota (./usagePlanKeys.ts). Offline
 * (`--endpoint`) they do not: the deployed runner does not model which keys a usage plan holds.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CONTROL_TABLE_OUTPUT, PETS_TABLE_OUTPUT } from '../../infra/names.ts';
import { API_KEY_FORMAT } from '../../lib/domain/apiKeys.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { USAGE, UsageError, parseCommand, type Invocation } from './commandLine.ts';
import { rotateCursor } from './cursorSecret.ts';
import { keyDelivery, type KeyDelivery } from './delivery.ts';
import { create, rotate, type IssueContext, type NewKey } from './issue.ts';
import { list, revoke } from './listing.ts';
import { keyPets } from './keyPets.ts';
import {
  KeysError,
  awsRegion,
  describeError,
  errorName,
  gatewaySide,
  noCredentials,
  requiredOutput,
  stackOutputsOf,
  type StackOutputsReader,
} from './stage.ts';
import type { UsagePlanKeys } from './usagePlanKeys.ts';

export { API_KEY_FORMAT };
export { TAKES_EFFECT, USAGE, describeDuration } from './commandLine.ts';
export { generateApiKey } from './issue.ts';
export type { StackOutputsReader } from './stage.ts';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

export interface KeysIo {
  /** When not given, one is made with the default credentials and region (and closed afterwards). */
  client?: DynamoDBDocumentClient;
  /**
   * Asked once (DescribeStacks) for the table when neither --table nor CONTROL_TABLE_NAME names it.
   * When not given, one is made like `client`.
   */
  stacks?: StackOutputsReader;
  /**
   * The API Gateway side of create, rotate and revoke. When not given, one is made like `client`,
   * unless the DynamoDB side is not AWS's: `--endpoint` given, or `client` given (without this).
   */
  usagePlanKeys?: UsagePlanKeys;
  out: (line: string) => void;
  err: (line: string) => void;
  /**
   * Whether `out` writes to a terminal (scripts/keys.ts: standard output's isTTY). When false, a new
   * key is never printed: create and rotate need --out. Callers that collect `out` leave it unset.
   */
  stdoutIsTerminal?: boolean;
  /**
   * Asks a question on the terminal and resolves to the answer (scripts/keys.ts, when standard input
   * is one): how `pets --remove` confirms. Without it, a removal needs --yes.
   */
  ask?: (question: string) => Promise<string>;
  env?: Record<string, string | undefined>;
  now?: () => Date;
}

/** Runs one command; resolves to the exit code. Never throws. */
export async function runKeys(argv: readonly string[], io: KeysIo): Promise<number> {
  let invocation: Invocation;
  let delivery: KeyDelivery | undefined;
  try {
    invocation = parseCommand(argv, io.env ?? process.env);
    const { command } = invocation;
    // Before anything is asked of AWS: where the new key will be shown.
    if (command.name === 'create' || command.name === 'rotate')
      delivery = keyDelivery(command.out, io.stdoutIsTerminal);
    // Before anything is read: a removal nobody can confirm at a terminal must say --yes.
    if (command.name === 'pets' && command.remove && !command.yes && !io.ask)
      throw new UsageError('pets --remove asks for the key id at a terminal; without one, give --yes.');
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`keys: ${error.message} (npm run keys -- --help for usage)`);
    return EXIT_USAGE;
  }
  if (invocation.command.name === 'help') {
    io.out(USAGE);
    return EXIT_OK;
  }
  try {
    await run(invocation, io, delivery);
    return EXIT_OK;
  } catch (error) {
    io.err(
      error instanceof KeysError
        ? `keys: ${error.message}`
        : errorName(error) === 'CredentialsProviderError'
          ? `keys: ${noCredentials(error as Error)}`
          : `keys ${invocation.command.name} failed: ${describeError(error)}`,
    );
    return EXIT_FAILED;
  } finally {
    delivery?.abandon();
  }
}

/** One command, against the stage's table (and, for the commands that issue or revoke keys against AWS, its usage plan). */
async function run(
  { command, table: givenTable, endpoint }: Invocation,
  io: KeysIo,
  delivery: KeyDelivery | undefined,
): Promise<void> {
  if (command.name === 'help') return;
  const env = io.env ?? process.env;
  const offline = endpoint !== undefined || (io.client !== undefined && io.usagePlanKeys === undefined);
  const usesGateway = (command.name === 'create' || command.name === 'rotate' || command.name === 'revoke') && !offline;
  // `pets` reads the pets table alone, named by its own option or output; the others the control table.
  const [namedTable, tableOutput, tableOption] =
    command.name === 'pets'
      ? [command.petsTable, PETS_TABLE_OUTPUT, '--pets-table']
      : [givenTable, CONTROL_TABLE_OUTPUT, '--table'];
  const needsRegion = !io.client || (!namedTable && !io.stacks) || (usesGateway && !io.usagePlanKeys);
  const region = needsRegion ? await awsRegion(env) : undefined;
  const outputs = namedTable && !usesGateway ? {} : await stackOutputsOf(command.stage, io.stacks, region);
  const table =
    namedTable ??
    requiredOutput(command.stage, outputs, tableOutput, `is it still being created?); give ${tableOption}.`);
  const gateway = usesGateway ? gatewaySide(command.stage, outputs, io.usagePlanKeys, region) : undefined;
  const client = io.client ?? createDocumentClient({ region, endpoint });
  const now = io.now?.() ?? new Date();
  try {
    const context: IssueContext = { client, stage: command.stage, table, gateway, now, out: io.out };
    switch (command.name) {
      case 'create':
        return await create(context, { ...newKeyOf(command), description: command.description, delivery: delivery! });
      case 'rotate':
        return await rotate(context, command.keyId, { ...newKeyOf(command), delivery: delivery! });
      case 'list':
        return await list(client, command.stage, table, now, io.out);
      case 'revoke':
        return await revoke(client, { stage: command.stage, table, keyId: command.keyId, gateway }, io.out);
      case 'rotate-cursor-secret':
        return await rotateCursor(client, command.stage, table, now, io.out);
      case 'pets':
        return await keyPets(client, {
          ...command,
          table,
          confirm: command.yes ? undefined : confirmBy(io),
          out: io.out,
        });
      default:
        return command satisfies never;
    }
  } finally {
    if (!io.client) client.destroy();
  }
}

/** `pets --remove`'s confirmation: the answer typed at the terminal must be exactly `expected`. */
const confirmBy =
  (io: KeysIo) =>
  async (question: string, expected: string): Promise<boolean> =>
    (await io.ask!(question)).trim() === expected;
/** What create and rotate were told of the new key besides its description. */
const newKeyOf = ({ lifetimeMs, scope, createsPerDay }: Pick<NewKey, 'lifetimeMs' | 'scope' | 'createsPerDay'>) => ({
  lifetimeMs,
  scope,
  createsPerDay,
});
