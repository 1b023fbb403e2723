import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DeleteCommand, GetCommand, PutCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { digestKey } from '../../lib/domain/apiKeys.ts';
import { authenticate } from '../../lib/http/auth.ts';
import { ControlTableApiKeys } from '../../lib/store/controlTableKeys.ts';
import { ApiError } from '../../lib/domain/errors.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { controlTableName, type Stage } from '../../lib/domain/stages.ts';
import { ensureControlTable } from '../../local/store.ts';
import { API_KEY_FORMAT, EXIT_FAILED, EXIT_OK, EXIT_USAGE, generateApiKey, runKeys } from '../../scripts/keys.ts';
import { useEmbeddedStore } from '../support/store.ts';

const endpoint = useEmbeddedStore();
const STAGING = controlTableName('staging');
const PRODUCTION = controlTableName('production');

let documents: DynamoDBDocumentClient;
/** Every command the CLI sent, by class name, and the fault to inject into one kind of command. */
let sent: string[] = [];
let fault: { command: string; error: () => Error } | undefined;
/** The real client on dynalite, wrapped only to count requests and inject a fault. */
let client: DynamoDBDocumentClient;

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
  for (const table of [STAGING, PRODUCTION]) {
    const { Items = [] } = await documents.send(new ScanCommand({ TableName: table }));
    for (const { pk, sk } of Items) await documents.send(new DeleteCommand({ TableName: table, Key: { pk, sk } }));
  }
});

const awsError = (name: string, message: string) => Object.assign(new Error(message), { name });

interface Run {
  code: number;
  out: string;
  err: string;
}

async function keys(...argv: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runKeys(argv, { client, out: (line) => out.push(line), err: (line) => err.push(line), env: {} });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** Creates a key and picks it and its id out of what create printed. */
async function createKey(stage: Stage, ...extra: string[]) {
  const run = await keys('create', '--stage', stage, ...extra);
  expect(run.code).toBe(EXIT_OK);
  const key = run.out.match(/psk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/)?.[0];
  if (!key) throw new Error(`no key in: ${run.out}`);
  const keyId = API_KEY_FORMAT.exec(key)?.[1];
  if (!keyId) throw new Error(`no key id in ${key}`);
  return { key, keyId, run };
}

const occurrences = (text: string, part: string) => text.split(part).length - 1;

const keyItem = async (table: string, keyId: string) =>
  (await documents.send(new GetCommand({ TableName: table, Key: { pk: 'apikeys', sk: keyId } }))).Item;

describe('keys create, list, revoke', () => {
  it('issues a key the service accepts, and stops accepting it after revoke once the cache refreshes', async () => {
    const { key, keyId } = await createKey('staging', '--description', 'integration partner');

    const listed = await keys('list', '--stage', 'staging');
    expect(listed.code).toBe(EXIT_OK);
    expect(listed.out).toContain(keyId);
    expect(listed.out).toContain('integration partner');

    let at = Date.parse('2025-01-01T00:00:00Z');
    const store = new ControlTableApiKeys({ documents, tableName: STAGING, ttlMs: 5 * 60_000, now: () => at });
    expect((await store.keyDigests()).map((digest) => digest.toString('hex'))).toEqual([digestKey(key).toString('hex')]);
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
    // ...and once that refresh has landed (a few milliseconds on dynalite; at most 100 x 20 ms), rejected.
    let rejected: unknown;
    for (let attempt = 0; attempt < 100 && rejected === undefined; attempt++) {
      await new Promise((done) => setTimeout(done, 20));
      rejected = await authenticate(`Bearer ${key}`, store).then(() => undefined, (error: unknown) => error);
    }
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
      out: (line) => out.push(line),
      err: (line) => err.push(line),
      env: {},
      now: () => now,
    });
    expect(code).toBe(EXIT_OK);
    const printed = [...out, ...err].join('\n');
    const key = printed.match(/psk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/)?.[0] ?? '';
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
      description: 'mobile app',
    });
    // The key itself is nowhere in the store.
    const stored = JSON.stringify((await documents.send(new ScanCommand({ TableName: PRODUCTION }))).Items);
    expect(stored).not.toContain(key);
    expect(stored).not.toContain(key.slice(17));
  });

  it('lists ids, creation dates and descriptions, but never a key or a digest', async () => {
    const created = [await createKey('staging', '--description', 'first'), await createKey('staging'), await createKey('production')];

    const listed = await keys('list', '--stage', 'staging');

    expect(listed.code).toBe(EXIT_OK);
    const [header, columns, ...rows] = listed.out.split('\n');
    expect(header).toBe(`2 API keys for staging (${STAGING}):`);
    expect(columns).toMatch(/^KEY ID\s+CREATED\s+DESCRIPTION$/);
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
    for (const { key } of created) await expect(authenticate(`Bearer ${key}`, store)).resolves.toMatch(/^[0-9a-f]{12}$/);
  });

  it('marks a malformed item in the list without showing its value', async () => {
    await documents.send(new PutCommand({ TableName: STAGING, Item: { pk: 'apikeys', sk: '0123456789ab', sha256: 'not-a-digest-value' } }));
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
    expect(await keyItem(STAGING, kept)).toBeDefined();

    // A staging key cannot be revoked as a production one.
    expect((await keys('revoke', kept, '--stage', 'production')).code).toBe(EXIT_FAILED);
    expect(await keyItem(STAGING, kept)).toBeDefined();
  });

  it('uses --table, else CONTROL_TABLE_NAME, else the stage\'s table', async () => {
    const other = 'keys-test-other-control';
    await ensureControlTable(endpoint(), other);
    const { keyId } = await createKey('staging', '--table', other);
    expect(await keyItem(other, keyId)).toBeDefined();
    expect(await keyItem(STAGING, keyId)).toBeUndefined();
    const out: string[] = [];
    const code = await runKeys(['list', '--stage', 'staging'], { client, out: (l) => out.push(l), err: () => {}, env: { CONTROL_TABLE_NAME: other } });
    expect(code).toBe(EXIT_OK);
    expect(out.join('\n')).toContain(keyId);
    expect((await keys('revoke', keyId, '--stage', 'staging', '--table', other)).code).toBe(EXIT_OK);
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
    [['rotate', '--stage', 'staging'], /unknown command "rotate"/],
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
  ])('answers %j with a message and exit code 2, without a request', async (argv, message) => {
    const run = await keys(...argv);
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.out).toBe('');
    expect(run.err).toMatch(message);
    expect(run.err).toContain('npm run keys -- --help');
    expect(sent).toEqual([]);
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

describe('keys as a command (npm run keys)', () => {
  const root = resolve(import.meta.dirname, '../..');
  const tsx = join(root, 'node_modules', '.bin', 'tsx');
  let home: string;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'keys-home-'));
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  /** Runs scripts/keys.ts in a child process with dummy credentials and no AWS configuration of the host. */
  async function command(argv: string[], env: Record<string, string> = {}): Promise<Run> {
    try {
      const { stdout, stderr } = await promisify(execFile)(tsx, ['scripts/keys.ts', ...argv], {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: home,
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
          AWS_REGION: 'us-east-1',
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

  it('creates with AWS_ENDPOINT_URL_DYNAMODB, revokes with --endpoint, and sets the exit codes', async () => {
    const created = await command(['create', '--stage', 'production'], { AWS_ENDPOINT_URL_DYNAMODB: endpoint() });
    expect(created.code, created.err).toBe(0);
    const key = created.out.match(/psk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/)?.[0] ?? '';
    expect(occurrences(created.out + created.err, key)).toBe(1);
    const keyId = key.slice(4, 16);
    expect(await keyItem(PRODUCTION, keyId)).toBeDefined();

    const revoked = await command(['revoke', keyId, '--stage', 'production', '--endpoint', endpoint()]);
    expect(revoked.code).toBe(0);
    expect(await keyItem(PRODUCTION, keyId)).toBeUndefined();

    const again = await command(['revoke', keyId, '--stage', 'production', '--endpoint', endpoint()]);
    expect(again.code).toBe(1);
    expect(again.err).toContain(`there is no key ${keyId}`);

    const usage = await command(['list']);
    expect(usage.code).toBe(2);
    expect(usage.err).toContain('list needs --stage');
  });
});
