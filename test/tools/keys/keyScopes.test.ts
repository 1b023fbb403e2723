/**
 * Key scopes and daily create ceilings as `npm run keys` issues, lists and rotates them (tools/keys/),
 * against the control table on dynalite and the service's own key store (lib/domain/keyScope.ts):
 * `--scope read|write` (default write), `--creates-per-day <n>` (default DEFAULT_CREATES_PER_DAY),
 * `rotate` carrying the old key's unless given, `list` showing both, and every mistake refused in one
 * line before anything is issued.
 */
import { DeleteCommand, GetCommand, PutCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { digestKey } from '../../../lib/domain/apiKeys.ts';
import { DEFAULT_CREATES_PER_DAY, MAX_CREATES_PER_DAY } from '../../../lib/domain/keyScope.ts';
import { authenticateCaller } from '../../../lib/http/auth.ts';
import { ControlTableApiKeys, keyItem, keyItemKey } from '../../../lib/store/controlTableKeys.ts';
import { createDocumentClient } from '../../../lib/store/dynamo.ts';
import { ensureControlTable } from '../../../local/embeddedStore.ts';
import { API_KEY_FORMAT, EXIT_FAILED, EXIT_OK, EXIT_USAGE, generateApiKey } from '../../../tools/keys/keys.ts';
import { keyIn, runKeysCollected } from '../../support/keys.ts';
import { useEmbeddedStore } from '../../support/store.ts';

const endpoint = useEmbeddedStore();
const TABLE = 'PetStore-staging-ControlTable-SCOPES';
let documents: DynamoDBDocumentClient;

beforeAll(async () => {
  await ensureControlTable(endpoint(), TABLE);
  documents = createDocumentClient({ endpoint: endpoint() });
});
afterAll(() => documents.destroy());
beforeEach(async () => {
  const { Items = [] } = await documents.send(new ScanCommand({ TableName: TABLE }));
  for (const { pk, sk } of Items) await documents.send(new DeleteCommand({ TableName: TABLE, Key: { pk, sk } }));
});

/** `npm run keys -- <argv>` offline against the table, at a terminal. */
const keys = (...argv: string[]) =>
  runKeysCollected([...argv, '--table', TABLE], { client: documents, env: {}, stdoutIsTerminal: true });

async function created(...options: string[]) {
  const run = await keys('create', '--stage', 'staging', ...options);
  expect(run.code, run.err).toBe(EXIT_OK);
  const key = keyIn(run.out) ?? '';
  return { run, key, keyId: API_KEY_FORMAT.exec(key)?.[1] ?? '' };
}

const item = async (keyId: string) =>
  (await documents.send(new GetCommand({ TableName: TABLE, Key: keyItemKey(keyId), ConsistentRead: true }))).Item;

/** The caller the service makes of `key`: its scope and ceiling as the functions and the authorizer see them. */
const callerOf = (key: string) =>
  authenticateCaller(`Bearer ${key}`, new ControlTableApiKeys({ documents, tableName: TABLE }));

describe('keys create --scope and --creates-per-day', () => {
  it(`issues a write key with ${DEFAULT_CREATES_PER_DAY} creates a day by default, and says so`, async () => {
    const { run, key, keyId } = await created();
    expect(await item(keyId)).toMatchObject({ scope: 'write', createsPerDay: DEFAULT_CREATES_PER_DAY });
    expect(await callerOf(key)).toMatchObject({ keyId, scope: 'write', createsPerDay: DEFAULT_CREATES_PER_DAY });
    expect(run.out).toContain(
      `Its scope: write (every operation), at most ${DEFAULT_CREATES_PER_DAY} pets created per UTC day (then 429 until 00:00 UTC).`,
    );
  });

  it('issues a read key, or a write key with its own ceiling, as told; list shows each', async () => {
    const reader = await created('--scope', 'read', '--description', 'dashboard');
    const writer = await created('--scope', 'write', '--creates-per-day', '25');
    expect(await item(reader.keyId)).toMatchObject({ scope: 'read' });
    expect(await callerOf(reader.key)).toMatchObject({ scope: 'read' });
    expect(reader.run.out).toContain('Its scope: read (the GET operations only; createPet answers it 403).');
    expect(await item(writer.keyId)).toMatchObject({ scope: 'write', createsPerDay: 25 });
    expect(await callerOf(writer.key)).toMatchObject({ scope: 'write', createsPerDay: 25 });

    const listed = await keys('list', '--stage', 'staging');
    const rowOf = (keyId: string) => listed.out.split('\n').find((row) => row.startsWith(keyId)) ?? '';
    expect(rowOf(reader.keyId)).toMatch(new RegExp(`^${reader.keyId}\\s+read\\s+\\d{4}-.*dashboard$`));
    expect(rowOf(writer.keyId)).toMatch(new RegExp(`^${writer.keyId}\\s+write 25/day\\s+\\d{4}-`));
    expect(listed.out).toContain('SCOPE: read calls only the GET operations');
  });

  it.each([
    [['--scope', 'admin'], '--scope must be read or write, not "admin".'],
    [['--creates-per-day', '0'], `--creates-per-day takes a whole number from 1 to ${MAX_CREATES_PER_DAY}, not "0".`],
    [['--creates-per-day', '1.5'], 'not "1.5"'],
    [['--creates-per-day', String(MAX_CREATES_PER_DAY + 1)], `not "${MAX_CREATES_PER_DAY + 1}"`],
    [['--scope', 'read', '--creates-per-day', '5'], '--creates-per-day is for write keys; a read key creates nothing.'],
  ])('refuses create %j in one line, exit code 2, issuing nothing', async (options, message) => {
    const run = await keys('create', '--stage', 'staging', ...options);
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.err.split('\n')).toHaveLength(1);
    expect(run.err).toContain(message);
    expect((await documents.send(new ScanCommand({ TableName: TABLE }))).Items).toEqual([]);
  });

  it('takes --scope and --creates-per-day on create and rotate only', async () => {
    for (const option of [
      ['--scope', 'read'],
      ['--creates-per-day', '5'],
    ]) {
      const run = await keys('list', '--stage', 'staging', ...option);
      expect(run.code).toBe(EXIT_USAGE);
      expect(run.err).toContain(`${option[0]} is only for create and rotate.`);
    }
  });
});

describe('keys rotate', () => {
  it("gives the successor the old key's scope and ceiling unless told otherwise", async () => {
    const reader = await created('--scope', 'read');
    const writer = await created('--creates-per-day', '40');
    const rotatedReader = await keys('rotate', reader.keyId, '--stage', 'staging');
    const rotatedWriter = await keys('rotate', writer.keyId, '--stage', 'staging');
    expect(await callerOf(keyIn(rotatedReader.out) ?? '')).toMatchObject({ scope: 'read' });
    expect(await callerOf(keyIn(rotatedWriter.out) ?? '')).toMatchObject({ scope: 'write', createsPerDay: 40 });

    const widened = await keys('rotate', reader.keyId, '--stage', 'staging', '--scope', 'write');
    expect(await callerOf(keyIn(widened.out) ?? '')).toMatchObject({
      scope: 'write',
      createsPerDay: DEFAULT_CREATES_PER_DAY,
    });
    const lowered = await keys('rotate', writer.keyId, '--stage', 'staging', '--creates-per-day', '3');
    expect(await callerOf(keyIn(lowered.out) ?? '')).toMatchObject({ scope: 'write', createsPerDay: 3 });
    const narrowed = await keys('rotate', writer.keyId, '--stage', 'staging', '--scope', 'read');
    expect(await callerOf(keyIn(narrowed.out) ?? '')).toMatchObject({ scope: 'read' });
  });

  it('refuses a ceiling for the successor of a read key in one line, issuing nothing', async () => {
    const reader = await created('--scope', 'read');
    const run = await keys('rotate', reader.keyId, '--stage', 'staging', '--creates-per-day', '9');
    expect(run.code).toBe(EXIT_FAILED);
    expect(run.err).toBe(
      `keys: rotate: key ${reader.keyId} is a read key, which creates nothing: --creates-per-day is for write keys.`,
    );
    expect((await documents.send(new ScanCommand({ TableName: TABLE }))).Items).toHaveLength(1);
  });
});

describe('the key store', () => {
  it('serves a key item from before scopes as a write key with the default ceiling, and refuses one whose scope or ceiling is not one', async () => {
    const items = {
      before: generateApiKey(),
      badScope: generateApiKey(),
      badCeiling: generateApiKey(),
    };
    const createdAt = new Date().toISOString();
    const put = (keyId: string, key: string, extra: Record<string, unknown> = {}) =>
      documents.send(
        new PutCommand({
          TableName: TABLE,
          Item: { ...keyItem({ keyId, sha256: digestKey(key).toString('hex'), createdAt }), ...extra },
        }),
      );
    await put(items.before.keyId, items.before.key);
    await put(items.badScope.keyId, items.badScope.key, { scope: 'admin' });
    await put(items.badCeiling.keyId, items.badCeiling.key, { createsPerDay: 0 });
    expect(await callerOf(items.before.key)).toMatchObject({ scope: 'write', createsPerDay: DEFAULT_CREATES_PER_DAY });
    await expect(callerOf(items.badScope.key)).rejects.toMatchObject({ status: 401 });
    await expect(callerOf(items.badCeiling.key)).rejects.toMatchObject({ status: 401 });
  });
});
