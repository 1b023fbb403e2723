import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DescribeStacksCommand, DescribeStacksCommandOutput } from '@aws-sdk/client-cloudformation';
import { DeleteCommand, GetCommand, PutCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { digestKey } from '../../../lib/domain/apiKeys.ts';
import { authenticate } from '../../../lib/http/auth.ts';
import { ControlTableApiKeys, keyItemKey } from '../../../lib/store/controlTableKeys.ts';
import { ApiError } from '../../../lib/domain/errors.ts';
import { createDocumentClient } from '../../../lib/store/dynamo.ts';
import type { Stage } from '../../../lib/domain/stages.ts';
import { ensureControlTable } from '../../../local/embeddedStore.ts';
import {
  API_KEY_FORMAT,
  EXIT_FAILED,
  EXIT_OK,
  EXIT_USAGE,
  TAKES_EFFECT,
  USAGE,
  describeDuration,
  generateApiKey,
  runKeys,
  type StackOutputsReader,
} from '../../../tools/keys/keys.ts';
import { KEY_REVOCATION_BOUND_MS } from '../../../lib/store/controlTableKeys.ts';
import { DEFAULT_KEY_LIFETIME_MS } from '../../../lib/domain/keyLifetime.ts';
import { DEFAULT_CREATES_PER_DAY } from '../../../lib/domain/keyScope.ts';
import { readFileSync } from 'node:fs';
import type { UsagePlanKeys } from '../../../tools/keys/usagePlanKeys.ts';
import { keyIn, runKeysCollected, type KeysRun } from '../../support/keys.ts';
import { useEmbeddedStore } from '../../support/store.ts';
import { trackSends } from '../../support/pendingSends.ts';

const endpoint = useEmbeddedStore();
/** Names as CloudFormation gives them: the stack names each table, and says which in its outputs. */
const STAGING = 'PetStore-staging-ControlTableF3E1E223-1QX8ZJ3N4ABCD';
const PRODUCTION = 'PetStore-production-ControlTableF3E1E223-7YH2KD9WEFGH';
const CONTROL_TABLES: Record<string, string> = { 'PetStore-staging': STAGING, 'PetStore-production': PRODUCTION };

let documents: DynamoDBDocumentClient;
/** Every command the CLI sent, by class name, and the fault to inject into one kind of command. */
let sent: string[] = [];
let fault: { command: string; error: () => Error } | undefined;
/** The real client on dynalite, wrapped only to count requests and inject a fault. */
let client: DynamoDBDocumentClient;
/** The stacks each DescribeStacks asked for, and what the stub answers for a stack. */
let described: string[] = [];
let stackAnswer: (name: string) => DescribeStacksCommandOutput = deployedStack;

function deployedStack(name: string): DescribeStacksCommandOutput {
  const table = CONTROL_TABLES[name];
  if (!table) throw awsError('ValidationError', `Stack with id ${name} does not exist`);
  return {
    $metadata: {},
    Stacks: [
      {
        StackName: name,
        StackStatus: 'CREATE_COMPLETE',
        CreationTime: new Date(),
        Outputs: [
          { OutputKey: 'ApiUrl', OutputValue: 'https://abc123.execute-api.us-east-1.amazonaws.com/v1/' },
          { OutputKey: 'ControlTableName', OutputValue: table },
          { OutputKey: 'UsagePlanId', OutputValue: `plan-${name}` },
        ],
      },
    ],
  };
}

/** The one CloudFormation call keys makes, stubbed: offline tests cannot describe a real stack. */
const stacks: StackOutputsReader = {
  send: async (command: DescribeStacksCommand) => {
    const name = command.input.StackName ?? '';
    described.push(name);
    return stackAnswer(name);
  },
};

/** The API Gateway side, stubbed: the API keys it holds by name (value, plan), and a fault for add. */
let gatewayKeys = new Map<string, { value: string; planId: string }>();
let gatewayFault: Error | undefined;
const usagePlanKeys: UsagePlanKeys = {
  add: async (planId, { name, value }) => {
    if (gatewayFault) throw gatewayFault;
    gatewayKeys.set(name, { value, planId });
  },
  remove: async (name) => (gatewayKeys.delete(name) ? 1 : 0),
};

beforeAll(async () => {
  for (const table of [STAGING, PRODUCTION]) await ensureControlTable(endpoint(), table);
  documents = createDocumentClient({ endpoint: endpoint() });
  client = {
    send: (command: { constructor: { name: string } }) => {
      sent.push(command.constructor.name);
      if (fault && command.constructor.name === fault.command) return Promise.reject(fault.error());
      return documents.send(command as never);
    },
  } as unknown as DynamoDBDocumentClient;
});
afterAll(() => documents.destroy());

/** Each test starts from empty control tables. */
beforeEach(async () => {
  sent = [];
  fault = undefined;
  described = [];
  stackAnswer = deployedStack;
  gatewayKeys = new Map();
  gatewayFault = undefined;
  for (const table of [STAGING, PRODUCTION]) {
    const { Items = [] } = await documents.send(new ScanCommand({ TableName: table }));
    for (const { pk, sk } of Items) await documents.send(new DeleteCommand({ TableName: table, Key: { pk, sk } }));
  }
});

const awsError = (name: string, message: string) => Object.assign(new Error(message), { name });

const keys = (...argv: string[]): Promise<KeysRun> =>
  runKeysCollected(argv, { client, stacks, usagePlanKeys, env: {} });

/** Creates a key and picks it and its id out of what create printed. */
async function createKey(stage: Stage, ...extra: string[]) {
  const run = await keys('create', '--stage', stage, ...extra);
  expect(run.code).toBe(EXIT_OK);
  const key = keyIn(run.out);
  if (!key) throw new Error(`no key in: ${run.out}`);
  const keyId = API_KEY_FORMAT.exec(key)?.[1];
  if (!keyId) throw new Error(`no key id in ${key}`);
  return { key, keyId, run };
}

const occurrences = (text: string, part: string) => text.split(part).length - 1;

const keyItem = async (table: string, keyId: string) =>
  (await documents.send(new GetCommand({ TableName: table, Key: keyItemKey(keyId) }))).Item;

describe('the revocation bound', () => {
  it('is one number: the CLI says it, docs/operating.md says it, the service holds to it (KEY_REVOCATION_BOUND_MS)', async () => {
    expect(describeDuration(KEY_REVOCATION_BOUND_MS)).toBe('5 minutes 30 seconds');
    expect(TAKES_EFFECT).toBe(`within ${describeDuration(KEY_REVOCATION_BOUND_MS)}`);
    expect(USAGE).toContain(TAKES_EFFECT);
    const { keyId } = await createKey('staging');
    expect((await keys('revoke', keyId, '--stage', 'staging')).out).toContain(`stops accepting it ${TAKES_EFFECT}.`);
    const operating = readFileSync(resolve(import.meta.dirname, '../../../docs/operating.md'), 'utf8');
    const start = operating.indexOf('\n## API keys\n');
    expect(start).toBeGreaterThan(0);
    const section = operating.slice(start, operating.indexOf('\n## ', start + 1));
    expect(section.replace(/\s+/g, ' ')).toContain(
      `a key issued or revoked takes effect ${TAKES_EFFECT} in every instance`,
    );
  });
});

describe('keys create, list, revoke', () => {
  it('issues a key the service accepts, and stops accepting it after revoke once the cache refreshes', async () => {
    const { key, keyId } = await createKey('staging', '--description', 'integration partner');

    const listed = await keys('list', '--stage', 'staging');
    expect(listed.code).toBe(EXIT_OK);
    expect(listed.out).toContain(keyId);
    expect(listed.out).toContain('integration partner');

    let at = Date.parse('2025-01-01T00:00:00Z');
    const storeDocuments = createDocumentClient({ endpoint: endpoint() });
    const { landed } = trackSends(storeDocuments);
    const store = new ControlTableApiKeys({
      documents: storeDocuments,
      tableName: STAGING,
      ttlMs: 5 * 60_000,
      now: () => at,
    });
    expect((await store.keyDigests()).map(({ digest }) => digest.toString('hex'))).toEqual([
      digestKey(key).toString('hex'),
    ]);
    await expect(authenticate(`Bearer ${key}`, store)).resolves.toMatch(/^[0-9a-f]{12}$/);

    const revoked = await keys('revoke', keyId, '--stage', 'staging');
    expect(revoked).toMatchObject({ code: EXIT_OK, err: '' });
    expect(revoked.out).toContain(`Revoked API key ${keyId}`);
    expect(await keyItem(STAGING, keyId)).toBeUndefined();

    // Still cached: accepted until the TTL runs out...
    at += 5 * 60_000 - 1;
    await expect(authenticate(`Bearer ${key}`, store)).resolves.toMatch(/^[0-9a-f]{12}$/);
    // ...then the first call after it is served the kept digests while the refresh runs in the background...
    at += 1;
    await expect(authenticate(`Bearer ${key}`, store)).resolves.toMatch(/^[0-9a-f]{12}$/);
    // ...and once that refresh has landed, rejected.
    await landed();
    const rejected = await authenticate(`Bearer ${key}`, store).then(
      () => undefined,
      (error: unknown) => error,
    );
    storeDocuments.destroy();
    expect(rejected).toBeInstanceOf(ApiError);
    expect((rejected as ApiError).status).toBe(401);

    expect((await keys('list', '--stage', 'staging')).out).toBe(`No API keys for staging (${STAGING}).`);
  });

  it('prints the key exactly once, with a warning, and stores only its digest', async () => {
    const now = new Date('2025-03-04T05:06:07.890Z');
    const out: string[] = [];
    const err: string[] = [];
    const code = await runKeys(['create', '--stage', 'production', '--description', 'mobile app'], {
      client,
      stacks,
      out: (line) => out.push(line),
      err: (line) => err.push(line),
      env: {},
      now: () => now,
    });
    expect(code).toBe(EXIT_OK);
    const printed = [...out, ...err].join('\n');
    const key = keyIn(printed) ?? '';
    expect(key).toMatch(API_KEY_FORMAT);
    expect(occurrences(printed, key)).toBe(1);
    expect(printed).toMatch(/cannot be shown again/i);
    const keyId = key.slice(4, 16);
    expect(out[0]).toContain(keyId);

    expect(await keyItem(PRODUCTION, keyId)).toEqual({
      pk: 'apikeys',
      sk: keyId,
      sha256: digestKey(key).toString('hex'),
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + DEFAULT_KEY_LIFETIME_MS).toISOString(),
      description: 'mobile app',
      scope: 'write',
      createsPerDay: DEFAULT_CREATES_PER_DAY,
    });
    // The key itself is nowhere in the store.
    const stored = JSON.stringify((await documents.send(new ScanCommand({ TableName: PRODUCTION }))).Items);
    expect(stored).not.toContain(key);
    expect(stored).not.toContain(key.slice(17));
  });

  it('lists ids, creation dates and descriptions, but never a key or a digest', async () => {
    const created = [
      await createKey('staging', '--description', 'first'),
      await createKey('staging'),
      await createKey('production'),
    ];

    const listed = await keys('list', '--stage', 'staging');

    expect(listed.code).toBe(EXIT_OK);
    const [header, columns, ...rest] = listed.out.split('\n');
    const rows = rest.filter((row) => /^[0-9a-f]{12} /.test(row));
    expect(header).toBe(`2 API keys for staging (${STAGING}):`);
    expect(columns).toMatch(/^KEY ID\s+SCOPE\s+CREATED\s+AGE\s+EXPIRES\s+LAST USED\s+DESCRIPTION$/);
    expect(rows).toHaveLength(2);
    for (const { key, keyId } of created.slice(0, 2)) {
      const createdAt = (await keyItem(STAGING, keyId))?.createdAt as string;
      expect(rows.some((row) => row.startsWith(keyId) && row.includes(createdAt))).toBe(true);
      expect(listed.out + listed.err).not.toContain(key);
      expect(listed.out + listed.err).not.toContain(key.slice(17));
      expect(listed.out + listed.err).not.toContain(digestKey(key).toString('hex'));
      expect(listed.out + listed.err).not.toContain(digestKey(key).toString('base64'));
    }
    expect(rows.find((row) => row.startsWith(created[0]!.keyId))).toMatch(/first$/);
    // A production key is not a staging key.
    expect(listed.out).not.toContain(created[2]!.keyId);
  });

  it('lists and serves many keys', async () => {
    const created = [];
    for (let i = 0; i < 12; i++) created.push(await createKey('staging'));

    const listed = await keys('list', '--stage', 'staging');
    expect(listed.out.split('\n')[0]).toBe(`12 API keys for staging (${STAGING}):`);
    for (const { keyId } of created) expect(listed.out).toContain(keyId);

    const store = new ControlTableApiKeys({ documents, tableName: STAGING });
    expect(await store.keyDigests()).toHaveLength(12);
    for (const { key } of created)
      await expect(authenticate(`Bearer ${key}`, store)).resolves.toMatch(/^[0-9a-f]{12}$/);
  });

  it('marks a malformed item in the list without showing its value', async () => {
    await documents.send(
      new PutCommand({ TableName: STAGING, Item: { ...keyItemKey('0123456789ab'), sha256: 'not-a-digest-value' } }),
    );
    const listed = await keys('list', '--stage', 'staging');
    expect(listed.code).toBe(EXIT_OK);
    expect(listed.out).toMatch(/0123456789ab\s+\(unreadable item: ignored by the service\)/);
    expect(listed.out).not.toContain('not-a-digest-value');
  });

  it('fails with exit code 1 and a clear message when revoking a key that does not exist', async () => {
    const { keyId: kept } = await createKey('staging');
    const run = await keys('revoke', 'abcdef012345', '--stage', 'staging');
    expect(run.code).toBe(EXIT_FAILED);
    expect(run.out).toBe('');
    expect(run.err).toContain('there is no key abcdef012345 for staging');
    expect(run.err.split('\n')).toHaveLength(1);
    expect(await keyItem(STAGING, kept)).toBeDefined();

    // A staging key cannot be revoked as a production one.
    expect((await keys('revoke', kept, '--stage', 'production')).code).toBe(EXIT_FAILED);
    expect(await keyItem(STAGING, kept)).toBeDefined();
  });

  it("uses --table, else CONTROL_TABLE_NAME, else the table the stage's stack names in its ControlTableName output", async () => {
    const other = 'keys-test-other-control';
    await ensureControlTable(endpoint(), other);
    const { keyId } = await createKey('staging', '--table', other);
    expect(await keyItem(other, keyId)).toBeDefined();
    expect(await keyItem(STAGING, keyId)).toBeUndefined();
    const out: string[] = [];
    const code = await runKeys(['list', '--stage', 'staging'], {
      client,
      stacks,
      out: (l) => out.push(l),
      err: () => {},
      env: { CONTROL_TABLE_NAME: other },
    });
    expect(code).toBe(EXIT_OK);
    expect(out.join('\n')).toContain(keyId);
    expect((await keys('revoke', keyId, '--stage', 'staging', '--table', other)).code).toBe(EXIT_OK);
    // list never asks the stack; create and revoke ask it for the usage plan only (the table is given).
    expect(described).toEqual(['PetStore-staging', 'PetStore-staging']);
    described = [];

    const { keyId: fromOutput } = await createKey('production');
    expect(described).toEqual(['PetStore-production']);
    expect(await keyItem(PRODUCTION, fromOutput)).toBeDefined();
  });

  it('fails with exit code 1, one line and no request to the table, when the stage has no stack', async () => {
    stackAnswer = (name) => {
      throw awsError('ValidationError', `Stack with id ${name} does not exist`);
    };
    const run = await keys('create', '--stage', 'staging');
    expect(run.code).toBe(EXIT_FAILED);
    expect(run.out).toBe('');
    expect(run.err).toBe(
      'keys: there is no stack PetStore-staging to find the staging control table in: deploy it (docs/deploying.md "Deploy"), ' +
        'point AWS_REGION or AWS_PROFILE at its account and region, or give --table.',
    );
    expect(sent).toEqual([]);
  });

  it('fails with exit code 1 when the stack has no ControlTableName output yet, and passes on other CloudFormation errors', async () => {
    stackAnswer = (name) => ({
      $metadata: {},
      Stacks: [{ StackName: name, StackStatus: 'CREATE_IN_PROGRESS', CreationTime: new Date() }],
    });
    const unfinished = await keys('list', '--stage', 'production');
    expect(unfinished.code).toBe(EXIT_FAILED);
    expect(unfinished.err).toBe(
      'keys: the stack PetStore-production has no ControlTableName output (is it still being created?); give --table.',
    );

    stackAnswer = () => {
      throw awsError('ExpiredToken', 'The security token included in the request is expired');
    };
    const expired = await keys('list', '--stage', 'production');
    expect(expired.code).toBe(EXIT_FAILED);
    expect(expired.err).toBe('keys list failed: ExpiredToken: The security token included in the request is expired');
    expect(sent).toEqual([]);
  });

  it('fails with exit code 1, and prints no key, when the table refuses the key', async () => {
    fault = { command: 'PutCommand', error: () => awsError('AccessDeniedException', 'not allowed') };
    const run = await keys('create', '--stage', 'staging');
    expect(run.code).toBe(EXIT_FAILED);
    expect(run.out).toBe('');
    expect(run.err).toBe('keys create failed: AccessDeniedException: not allowed');
    expect(run.err).not.toMatch(/psk_/);
  });

  it('draws a new id when one is taken, and gives up after three', async () => {
    fault = { command: 'PutCommand', error: () => awsError('ConditionalCheckFailedException', 'exists') };
    const run = await keys('create', '--stage', 'staging');
    expect(run.code).toBe(EXIT_FAILED);
    expect(run.err).toContain('ConditionalCheckFailedException');
    expect(sent.filter((name) => name === 'PutCommand')).toHaveLength(3);
  });
});

describe('keys usage', () => {
  it('prints help with exit code 0', async () => {
    for (const argv of [['--help'], ['-h'], ['help'], ['create', '--help']]) {
      const run = await keys(...argv);
      expect(run.code).toBe(EXIT_OK);
      expect(run.out).toMatch(/^Usage: npm run keys -- <command>/);
      expect(run.out).toContain('revoke <keyId> --stage <stage>');
    }
  });

  it.each([
    [[], /a command is required/],
    [['rotate-everything', '--stage', 'staging'], /unknown command "rotate-everything"/],
    [['rotate', '--stage', 'staging'], /rotate needs the id of the key/],
    [['rotate', 'ABC', '--stage', 'staging'], /"ABC" is not a key id/],
    [
      ['create', '--stage', 'staging', '--expires-in', '366d'],
      /--expires-in takes whole days or hours from 1 hour to 365 days \(e\.g\. 30d, 12h\), not "366d"/,
    ],
    [['create', '--stage', 'staging', '--expires-in', '0h'], /--expires-in takes whole days or hours/],
    [['create', '--stage', 'staging', '--expires-in', '2w'], /--expires-in takes whole days or hours/],
    [['list', '--stage', 'staging', '--expires-in', '30d'], /--expires-in is only for create and rotate/],
    [['revoke', 'abcdef012345', '--stage', 'staging', '--out', 'x'], /--out is only for create and rotate/],
    [['create', '--stage', 'staging', '--out', ' '], /--out needs a file name/],
    [['create'], /create needs --stage staging\|production/],
    [['list', '--stage', 'dev'], /--stage must be staging or production, not "dev"/],
    [['list', '--stage'], /--stage/],
    [['list', '--stage', 'staging', '--verbose'], /Unknown option '--verbose'/],
    [['list', '--stage', 'staging', '--description', 'x'], /--description is only for create/],
    [['list', '--stage', 'staging', 'extra'], /list takes no arguments/],
    [['revoke', '--stage', 'staging'], /revoke needs the id/],
    [['revoke', 'ABC', '--stage', 'staging'], /"ABC" is not a key id/],
    [['revoke', 'abcdef012345', 'abcdef012346', '--stage', 'staging'], /revoke takes one key id/],
    [['create', '--stage', 'staging', '--description', 'x'.repeat(1025)], /at most 1024 characters/],
    [['list', '--stage', 'staging', '--endpoint', 'not a url'], /is not a URL/],
    [['list', '--stage', 'staging', '--table', 'no spaces allowed'], /is not a DynamoDB table name/],
  ])('answers %j with a message in one line and exit code 2, without a request', async (argv, message) => {
    const run = await keys(...argv);
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.out).toBe('');
    expect(run.err).toMatch(message);
    expect(run.err.split('\n')).toHaveLength(1);
    expect(run.err).toContain('npm run keys -- --help');
    expect(sent).toEqual([]);
    expect(described).toEqual([]);
  });

  it('does not echo a whole key given to revoke', async () => {
    const { key } = generateApiKey();
    const run = await keys('revoke', key, '--stage', 'staging');
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.err).toContain('Give only the id');
    expect(run.err).not.toContain(key);
  });

  it('generates distinct keys that are valid bearer tokens and carry their id', () => {
    const generated = Array.from({ length: 50 }, generateApiKey);
    expect(new Set(generated.map(({ key }) => key)).size).toBe(50);
    for (const { key, keyId } of generated) {
      expect(key).toMatch(API_KEY_FORMAT);
      expect(key).toMatch(/^[A-Za-z0-9\-._~+/]+=*$/); // RFC 6750 b64token
      expect(API_KEY_FORMAT.exec(key)?.[1]).toBe(keyId);
      expect(Buffer.from(key.slice(17), 'base64url')).toHaveLength(32);
    }
  });
});

/**
 * CloudFormation on loopback, as the real client talks to it (AWS query protocol): DescribeStacks
 * answers the stacks of CONTROL_TABLES and ValidationError for any other; every request is recorded.
 */
interface CloudFormationRequest {
  action: string | null;
  stackName: string | null;
  /** The credential scope of its SigV4 signature: `<date>/<region>/cloudformation/aws4_request`. */
  scope: string | undefined;
}

async function startCloudFormation(requests: CloudFormationRequest[]): Promise<Server> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const form = new URLSearchParams(body);
      const stackName = form.get('StackName');
      const scope = /Credential=[^/]+\/([^,]+),/.exec(request.headers.authorization ?? '')?.[1];
      requests.push({ action: form.get('Action'), stackName, scope });
      const table = stackName ? CONTROL_TABLES[stackName] : undefined;
      const xmlns = 'http://cloudformation.amazonaws.com/doc/2010-05-15/';
      response.setHeader('Content-Type', 'text/xml');
      if (!table) {
        response.statusCode = 400;
        response.end(
          `<ErrorResponse xmlns="${xmlns}"><Error><Type>Sender</Type><Code>ValidationError</Code>` +
            `<Message>Stack with id ${stackName} does not exist</Message></Error><RequestId>r1</RequestId></ErrorResponse>`,
        );
        return;
      }
      response.end(
        `<DescribeStacksResponse xmlns="${xmlns}"><DescribeStacksResult><Stacks><member>` +
          `<StackName>${stackName}</StackName><StackStatus>UPDATE_COMPLETE</StackStatus><CreationTime>2026-01-02T03:04:05Z</CreationTime>` +
          `<Outputs><member><OutputKey>ControlTableName</OutputKey><OutputValue>${table}</OutputValue></member></Outputs>` +
          `</member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>r2</RequestId></ResponseMetadata></DescribeStacksResponse>`,
      );
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return server;
}

describe('keys as a command (npm run keys)', () => {
  const root = resolve(import.meta.dirname, '../../..');
  const tsx = join(root, 'node_modules', '.bin', 'tsx');
  let home: string;
  let cloudFormation: Server;
  const requests: CloudFormationRequest[] = [];
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'keys-home-'));
    // The deployer's profile: its region is the one keys must use when AWS_REGION is not set.
    writeFileSync(join(home, 'config'), '[default]\nregion = eu-west-1\n');
    writeFileSync(join(home, 'credentials'), '');
    cloudFormation = await startCloudFormation(requests);
  });
  afterAll(async () => {
    rmSync(home, { recursive: true, force: true });
    await new Promise((closed) => cloudFormation.close(closed));
  });
  beforeEach(() => {
    requests.length = 0;
  });

  /**
   * Runs scripts/keys.ts in a child process with dummy credentials, the profile above and no other
   * AWS configuration of the host; CloudFormation is the loopback one.
   */
  async function command(argv: string[], env: Record<string, string> = {}): Promise<KeysRun> {
    const { port } = cloudFormation.address() as AddressInfo;
    try {
      const { stdout, stderr } = await promisify(execFile)(tsx, ['scripts/keys.ts', ...argv], {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: home,
          AWS_CONFIG_FILE: join(home, 'config'),
          AWS_SHARED_CREDENTIALS_FILE: join(home, 'credentials'),
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
          AWS_ENDPOINT_URL_CLOUDFORMATION: `http://127.0.0.1:${port}`,
          AWS_EC2_METADATA_DISABLED: 'true',
          NODE_NO_WARNINGS: '1',
          ...env,
        },
      });
      return { code: 0, out: stdout, err: stderr };
    } catch (error) {
      const failed = error as { code?: unknown; stdout?: string; stderr?: string };
      if (typeof failed.code !== 'number') throw error;
      return { code: failed.code, out: failed.stdout ?? '', err: failed.stderr ?? '' };
    }
  }

  it("finds the table in the stack's outputs in the profile's region, creates with AWS_ENDPOINT_URL_DYNAMODB, revokes with --endpoint", async () => {
    const file = join(home, 'production-key');
    const created = await command(['create', '--stage', 'production', '--out', file], {
      AWS_ENDPOINT_URL_DYNAMODB: endpoint(),
    });
    expect(created.code, created.err).toBe(0);
    // Standard output is a pipe here: the key is only in the file, which only its owner may read.
    const key = readFileSync(file, 'utf8').trimEnd();
    expect(key).toMatch(API_KEY_FORMAT);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(created.out + created.err).not.toContain(key);
    expect(created.out).toContain(`The key is in ${file} (mode 0600)`);
    const keyId = key.slice(4, 16);
    expect(await keyItem(PRODUCTION, keyId)).toBeDefined();
    expect(requests).toEqual([
      {
        action: 'DescribeStacks',
        stackName: 'PetStore-production',
        scope: expect.stringMatching(/^\d{8}\/eu-west-1\/cloudformation\/aws4_request$/),
      },
    ]);

    // AWS_REGION wins over the profile.
    const revoked = await command(['revoke', keyId, '--stage', 'production', '--endpoint', endpoint()], {
      AWS_REGION: 'us-west-2',
    });
    expect(revoked.code, revoked.err).toBe(0);
    expect(await keyItem(PRODUCTION, keyId)).toBeUndefined();
    expect(requests[1]!.scope).toMatch(/\/us-west-2\/cloudformation\//);

    const again = await command([
      'revoke',
      keyId,
      '--stage',
      'production',
      '--endpoint',
      endpoint(),
      '--table',
      PRODUCTION,
    ]);
    expect(again.code).toBe(1);
    expect(again.err).toContain(`there is no key ${keyId}`);
    expect(requests).toHaveLength(2);

    const usage = await command(['list']);
    expect(usage.code).toBe(2);
    expect(usage.err).toContain('list needs --stage');
  });

  it('writes --out in the folder the command was typed in, not the package folder npm runs it from', async () => {
    const typedIn = mkdtempSync(join(home, 'typed-in-'));
    const { stdout } = await promisify(execFile)(
      'npm',
      ['--prefix', root, 'run', '-s', 'keys', '--', 'create', '--stage', 'staging', '--out', 'staging.key'],
      {
        cwd: typedIn,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: home,
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
          AWS_REGION: 'eu-west-1',
          CONTROL_TABLE_NAME: STAGING,
          AWS_ENDPOINT_URL_DYNAMODB: endpoint(),
        },
      },
    );
    expect(stdout).toContain('The key is in staging.key (mode 0600)');
    expect(readFileSync(join(typedIn, 'staging.key'), 'utf8').trimEnd()).toMatch(API_KEY_FORMAT);
    expect(existsSync(join(root, 'staging.key'))).toBe(false);
  });

  it('refuses in one line, exit code 2 and before any request, to print a key into standard output that is not a terminal', async () => {
    const run = await command(['create', '--stage', 'staging'], { AWS_ENDPOINT_URL_DYNAMODB: endpoint() });
    expect(run).toMatchObject({ code: 2, out: '' });
    expect(run.err).toBe(
      'keys: standard output is not a terminal, so the key would land in a pipe, a file or a log: give --out <file> (written with mode 0600). (npm run keys -- --help for usage)\n',
    );
    expect(requests).toEqual([]);
    expect((await documents.send(new ScanCommand({ TableName: STAGING }))).Items).toEqual([]);
  });

  it('without AWS credentials: exit code 1, one line naming --table/--endpoint and logging in, no stack, and no key file left', async () => {
    const file = join(home, 'never-written');
    const run = await command(['create', '--stage', 'staging', '--out', file], {
      AWS_ACCESS_KEY_ID: '',
      AWS_SECRET_ACCESS_KEY: '',
    });
    expect(run.code).toBe(1);
    expect(run.out).toBe('');
    expect(existsSync(file)).toBe(false);
    expect(run.err.trimEnd().split('\n')).toEqual([
      expect.stringMatching(
        /^keys: no AWS credentials \(.*\)\. For a deployed stage, log in to its account \(aws sso login --profile <profile>, then AWS_PROFILE=<profile> npm run keys -- \.\.\.\); for a stage run offline, give --table and --endpoint/,
      ),
    ]);
    expect(requests).toEqual([]);
  });

  it('answers exit code 1 in one line, naming the region, when the stage has no stack there', async () => {
    CONTROL_TABLES['PetStore-staging'] = '';
    try {
      const run = await command(['list', '--stage', 'staging'], { AWS_ENDPOINT_URL_DYNAMODB: endpoint() });
      expect(run.code).toBe(1);
      expect(run.out).toBe('');
      expect(run.err).toBe(
        'keys: there is no stack PetStore-staging in eu-west-1 to find the staging control table in: deploy it ' +
          '(docs/deploying.md "Deploy"), point AWS_REGION or AWS_PROFILE at its account and region, or give --table.\n',
      );
    } finally {
      CONTROL_TABLES['PetStore-staging'] = STAGING;
    }
  });
});

describe('each key\'s API Gateway API key in the stage\'s usage plan (docs/operating.md "Keyless traffic and per-key limits")', () => {
  it("creates it with the key's digest as value, in the plan the stack outputs, and deletes it on revoke", async () => {
    const { key, keyId, run } = await createKey('production');
    expect([...gatewayKeys]).toEqual([
      [`petstore-production-${keyId}`, { value: digestKey(key).toString('hex'), planId: 'plan-PetStore-production' }],
    ]);
    expect(JSON.stringify([...gatewayKeys])).not.toContain(key);
    expect(run.out).toContain('usage plan plan-PetStore-production');
    // Even with --table, the plan comes from the stack.
    await createKey('staging', '--table', STAGING);
    expect(gatewayKeys.size).toBe(2);

    const revoked = await keys('revoke', keyId, '--stage', 'production');
    expect(revoked.code).toBe(EXIT_OK);
    expect([...gatewayKeys.keys()]).toEqual([expect.stringMatching(/^petstore-staging-/)]);
    expect(await keyItem(PRODUCTION, keyId)).toBeUndefined();
  });

  it('creates nothing when the usage plan refuses the key: the item is deleted again and no key is printed', async () => {
    gatewayFault = awsError('LimitExceededException', 'API keys per account per Region: 10000');
    const run = await keys('create', '--stage', 'staging');
    expect(run.code).toBe(EXIT_FAILED);
    expect(run.err).toContain('LimitExceededException');
    expect(`${run.out}${run.err}`).not.toMatch(/psk_/);
    expect((await documents.send(new ScanCommand({ TableName: STAGING }))).Items).toEqual([]);
  });

  it('refuses to create a key the stage cannot limit: a stack without the UsagePlanId output', async () => {
    stackAnswer = (name) => {
      const answer = deployedStack(name);
      const stack = answer.Stacks![0]!;
      return {
        ...answer,
        Stacks: [{ ...stack, Outputs: stack.Outputs!.filter((o) => o.OutputKey !== 'UsagePlanId') }],
      };
    };
    const run = await keys('create', '--stage', 'staging');
    expect(run.code).toBe(EXIT_FAILED);
    expect(run.err).toContain('no UsagePlanId output');
    expect((await documents.send(new ScanCommand({ TableName: STAGING }))).Items).toEqual([]);
  });

  it('revokes a key whose item is already gone but whose API Gateway key is left', async () => {
    const { keyId } = await createKey('staging');
    await documents.send(new DeleteCommand({ TableName: STAGING, Key: keyItemKey(keyId) }));
    const run = await keys('revoke', keyId, '--stage', 'staging');
    expect(run.code).toBe(EXIT_OK);
    expect(gatewayKeys.size).toBe(0);
  });

  it('offline (--endpoint) makes no API Gateway call and says so', async () => {
    const run = await keys('create', '--stage', 'staging', '--table', STAGING, '--endpoint', endpoint());
    expect(run.code).toBe(EXIT_OK);
    expect(gatewayKeys.size).toBe(0);
    expect(described).toEqual([]);
    expect(run.out).toContain('Offline (--endpoint)');
  });
});
