/**
 * Keys that expire, as `npm run keys` issues, lists and rotates them (tools/keys/), against the
 * control table on dynalite and the service's own key store: every key has an expiry (default
 * DEFAULT_KEY_LIFETIME_MS, at most MAX_KEY_LIFETIME_MS, `--expires-in`), `list` shows each key's
 * age, expiry and last use, `rotate` issues the successor before the old key expires and shortens
 * the old key's life to ROTATION_OVERLAP_MS (never lengthens it), and a new key is shown only on a
 * terminal or in the file `--out` names (0600).
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteCommand, GetCommand, PutCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { digestKey } from '../../../lib/domain/apiKeys.ts';
import {
  DEFAULT_KEY_LIFETIME_MS,
  KEY_USE_RECORD_INTERVAL_MS,
  MAX_KEY_LIFETIME_MS,
  ROTATION_OVERLAP_MS,
} from '../../../lib/domain/keyLifetime.ts';
import { authenticateCaller } from '../../../lib/http/auth.ts';
import { ControlTableApiKeys, keyItem, keyItemKey } from '../../../lib/store/controlTableKeys.ts';
import { createDocumentClient } from '../../../lib/store/dynamo.ts';
import { KeyUses } from '../../../lib/store/keyUses.ts';
import { ensureControlTable } from '../../../local/embeddedStore.ts';
import {
  API_KEY_FORMAT,
  EXIT_FAILED,
  EXIT_OK,
  EXIT_USAGE,
  generateApiKey,
  type StackOutputsReader,
} from '../../../tools/keys/keys.ts';
import type { UsagePlanKeys } from '../../../tools/keys/usagePlanKeys.ts';
import { API_KEY_FILE, keyIn, runKeysCollected } from '../../support/keys.ts';
import { useEmbeddedStore } from '../../support/store.ts';

const endpoint = useEmbeddedStore();
const TABLE = 'PetStore-staging-ControlTable-LIFETIMES';
const DAY = 86_400_000;
let documents: DynamoDBDocumentClient;
let dir: string;
let clock: Date;
let gatewayKeys: Map<string, string>;

const stacks: StackOutputsReader = {
  send: async () => ({
    $metadata: {},
    Stacks: [
      {
        StackName: 'PetStore-staging',
        StackStatus: 'UPDATE_COMPLETE',
        CreationTime: new Date(),
        Outputs: [
          { OutputKey: 'ControlTableName', OutputValue: TABLE },
          { OutputKey: 'UsagePlanId', OutputValue: 'plan-1' },
        ],
      },
    ],
  }),
};
const usagePlanKeys: UsagePlanKeys = {
  add: async (_plan, { name, value }) => void gatewayKeys.set(name, value),
  remove: async (name) => (gatewayKeys.delete(name) ? 1 : 0),
};

beforeAll(async () => {
  await ensureControlTable(endpoint(), TABLE);
  documents = createDocumentClient({ endpoint: endpoint() });
  dir = mkdtempSync(join(tmpdir(), 'key-lifetimes-'));
});
afterAll(() => {
  documents.destroy();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  clock = new Date('2026-11-01T10:00:00.000Z');
  gatewayKeys = new Map();
  const { Items = [] } = await documents.send(new ScanCommand({ TableName: TABLE }));
  for (const { pk, sk } of Items) await documents.send(new DeleteCommand({ TableName: TABLE, Key: { pk, sk } }));
});

const keys = (argv: string[], { terminal }: { terminal?: boolean } = {}) =>
  runKeysCollected(argv, {
    client: documents,
    stacks,
    usagePlanKeys,
    env: {},
    now: () => clock,
    ...(terminal === undefined ? {} : { stdoutIsTerminal: terminal }),
  });

/** The key a run printed, or '' (no key) when it printed none. */
const printedKey = (text: string) => keyIn(text) ?? '';
const idOf = (key: string) => API_KEY_FORMAT.exec(key)?.[1] ?? '';
const item = async (keyId: string) =>
  (await documents.send(new GetCommand({ TableName: TABLE, Key: keyItemKey(keyId), ConsistentRead: true }))).Item;
/** Whether the service (its key store over the table, at `at`) accepts `key`. */
const accepted = (key: string, at: Date) =>
  authenticateCaller(
    `Bearer ${key}`,
    new ControlTableApiKeys({ documents, tableName: TABLE }),
    undefined,
    at.getTime(),
  ).then(
    () => true,
    () => false,
  );

describe('every key expires', () => {
  it(`after ${DEFAULT_KEY_LIFETIME_MS / DAY} days by default, after --expires-in otherwise, and the service refuses it from then on`, async () => {
    const byDefault = printedKey((await keys(['create', '--stage', 'staging'], { terminal: true })).out);
    const shorter = await keys(['create', '--stage', 'staging', '--expires-in', '12h'], { terminal: true });
    const short = printedKey(shorter.out);
    expect((await item(idOf(byDefault)))!.expiresAt).toBe(
      new Date(clock.getTime() + DEFAULT_KEY_LIFETIME_MS).toISOString(),
    );
    expect((await item(idOf(short)))!.expiresAt).toBe('2026-11-01T22:00:00.000Z');
    expect(shorter.out.split('\n')[0]).toBe(
      `Created API key ${idOf(short)} for staging; it expires 2026-11-01T22:00:00.000Z (12 hours from 2026-11-01T10:00:00.000Z).`,
    );

    const justBefore = new Date(Date.parse('2026-11-01T22:00:00.000Z') - 1);
    expect(await accepted(short, justBefore)).toBe(true);
    expect(await accepted(short, new Date('2026-11-01T22:00:00.000Z'))).toBe(false);
    expect(await accepted(byDefault, new Date('2026-11-01T22:00:00.000Z'))).toBe(true);
    expect(await accepted(byDefault, new Date(clock.getTime() + DEFAULT_KEY_LIFETIME_MS))).toBe(false);
  });

  it('at most after the maximum lifetime, whatever the item says; a key from before expiry after its creation plus the maximum', async () => {
    const { key: long, keyId: longId } = generateApiKey();
    const { key: legacy, keyId: legacyId } = generateApiKey();
    const created = clock.toISOString();
    await documents.send(
      new PutCommand({
        TableName: TABLE,
        Item: keyItem({
          keyId: longId,
          sha256: digestKey(long).toString('hex'),
          createdAt: created,
          expiresAt: '2099-01-01T00:00:00.000Z',
        }),
      }),
    );
    await documents.send(
      new PutCommand({
        TableName: TABLE,
        Item: keyItem({ keyId: legacyId, sha256: digestKey(legacy).toString('hex'), createdAt: created }),
      }),
    );
    const limit = new Date(clock.getTime() + MAX_KEY_LIFETIME_MS);
    for (const key of [long, legacy]) {
      expect(await accepted(key, new Date(limit.getTime() - 1))).toBe(true);
      expect(await accepted(key, limit)).toBe(false);
    }
    const listed = (await keys(['list', '--stage', 'staging'])).out;
    expect(listed).toMatch(new RegExp(`^${legacyId} .*${limit.toISOString().slice(0, 16)}Z \\(in 365d\\)\\*`, 'm'));
    expect(listed).toContain('* created before keys expired: it expires 365 days after its creation.');
  });
});

describe('keys list', () => {
  it("shows each key's age, expiry and last use (as the authorizer records it), and marks an expired key", async () => {
    const fresh = printedKey(
      (await keys(['create', '--stage', 'staging', '--description', 'fresh'], { terminal: true })).out,
    );
    clock = new Date(clock.getTime() - 80 * DAY);
    const old = printedKey(
      (await keys(['create', '--stage', 'staging', '--expires-in', '30d', '--description', 'old'], { terminal: true }))
        .out,
    );
    clock = new Date('2026-11-01T10:00:00.000Z');
    await new KeyUses(documents, TABLE, () => clock.getTime() - 3 * 60 * 60_000).record(idOf(fresh));

    const listed = await keys(['list', '--stage', 'staging']);
    expect(listed.code).toBe(EXIT_OK);
    const row = (key: string) => listed.out.split('\n').find((line) => line.startsWith(idOf(key)))!;
    expect(row(fresh)).toMatch(/ 0m +2027-01-30T10:00Z \(in 90d\) +3h ago +fresh$/);
    expect(row(old)).toMatch(/ 80d +2026-09-12T10:00Z \(EXPIRED\) +never +old$/);
    expect(listed.out).toContain(`at most once every ${KEY_USE_RECORD_INTERVAL_MS / 60_000} minutes`);
    for (const key of [fresh, old]) {
      expect(listed.out).not.toContain(key);
      expect(listed.out).not.toContain(digestKey(key).toString('hex'));
    }
  });
});

describe('keys rotate', () => {
  it('issues the successor at once with the old description, and shortens the old key to the overlap: both work in between, then only the successor', async () => {
    const old = printedKey(
      (await keys(['create', '--stage', 'staging', '--description', 'partner A'], { terminal: true })).out,
    );
    clock = new Date(clock.getTime() + 10 * DAY);
    const rotated = await keys(['rotate', idOf(old), '--stage', 'staging'], { terminal: true });
    expect(rotated.code, rotated.err).toBe(EXIT_OK);
    const successor = printedKey(rotated.out);
    expect(successor).not.toBe(old);
    expect(rotated.out.split('\n')[0]).toMatch(
      new RegExp(
        `^Issued API key ${idOf(successor)} for staging, the successor of ${idOf(old)} \\(partner A\\); it expires `,
      ),
    );
    const until = new Date(clock.getTime() + ROTATION_OVERLAP_MS);
    expect(rotated.out).toContain(
      `The old key ${idOf(old)} keeps working until ${until.toISOString()} (shortened from `,
    );
    expect(await item(idOf(old))).toMatchObject({ expiresAt: until.toISOString(), description: 'partner A' });
    expect(await item(idOf(successor))).toMatchObject({
      description: 'partner A',
      expiresAt: new Date(clock.getTime() + DEFAULT_KEY_LIFETIME_MS).toISOString(),
    });
    expect([...gatewayKeys.keys()].sort()).toEqual(
      [`petstore-staging-${idOf(old)}`, `petstore-staging-${idOf(successor)}`].sort(),
    );

    const between = new Date(until.getTime() - 1);
    expect([await accepted(old, between), await accepted(successor, between)]).toEqual([true, true]);
    expect([await accepted(old, until), await accepted(successor, until)]).toEqual([false, true]);
  });

  it('never lengthens the old key: one expiring within the overlap keeps its own expiry', async () => {
    const old = printedKey(
      (await keys(['create', '--stage', 'staging', '--expires-in', '2d'], { terminal: true })).out,
    );
    const expiresAt = (await item(idOf(old)))!.expiresAt as string;
    const rotated = await keys(['rotate', idOf(old), '--stage', 'staging', '--expires-in', '30d'], { terminal: true });
    expect(rotated.code).toBe(EXIT_OK);
    expect((await item(idOf(old)))!.expiresAt).toBe(expiresAt);
    expect(rotated.out).toContain(`keeps working until ${expiresAt} (its own expiry, not lengthened)`);
    expect((await item(idOf(printedKey(rotated.out))))!.expiresAt).toBe(
      new Date(clock.getTime() + 30 * DAY).toISOString(),
    );
  });

  it('refuses, in one line and issuing nothing, a key that is not there or has expired', async () => {
    const gone = await keys(['rotate', 'abcdef012345', '--stage', 'staging'], { terminal: true });
    expect(gone).toMatchObject({
      code: EXIT_FAILED,
      out: '',
      err: `keys: rotate: there is no key abcdef012345 for staging (in ${TABLE}); nothing was issued.`,
    });
    const expired = printedKey(
      (await keys(['create', '--stage', 'staging', '--expires-in', '1h'], { terminal: true })).out,
    );
    clock = new Date(clock.getTime() + 2 * 3_600_000);
    const late = await keys(['rotate', idOf(expired), '--stage', 'staging'], { terminal: true });
    expect(late.code).toBe(EXIT_FAILED);
    expect(late.err).toMatch(
      /^keys: rotate: key [0-9a-f]{12} expired at 2026-11-01T11:00:00\.000Z; nothing was issued: create a new key instead\.$/,
    );
    expect((await documents.send(new ScanCommand({ TableName: TABLE }))).Items).toHaveLength(1);
  });
});

describe('where a new key is shown', () => {
  it('refuses, in one line, exit code 2 and before any request, standard output that is not a terminal', async () => {
    for (const argv of [
      ['create', '--stage', 'staging'],
      ['rotate', 'abcdef012345', '--stage', 'staging'],
    ]) {
      const run = await keys(argv, { terminal: false });
      expect(run).toMatchObject({ code: EXIT_USAGE, out: '' });
      expect(run.err.split('\n')).toEqual([
        expect.stringMatching(
          /^keys: standard output is not a terminal, so the key would land in a pipe, a file or a log: give --out <file>/,
        ),
      ]);
    }
    expect((await documents.send(new ScanCommand({ TableName: TABLE }))).Items).toEqual([]);
  });

  it('writes it only to --out: a new file, mode 0600, the key and nothing else', async () => {
    const file = join(dir, 'partner.key');
    const run = await keys(['create', '--stage', 'staging', '--out', file], { terminal: false });
    expect(run.code).toBe(EXIT_OK);
    const key = readFileSync(file, 'utf8');
    expect(key).toMatch(API_KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(run.out).not.toContain(key.trim());
    expect(await item(idOf(key.trim()))).toBeDefined();
  });

  it('never writes over a file, and takes back the file it made when the key could not be issued', async () => {
    const taken = join(dir, 'taken.key');
    writeFileSync(taken, 'something else');
    const refused = await keys(['create', '--stage', 'staging', '--out', taken]);
    expect(refused).toMatchObject({
      code: EXIT_USAGE,
      err: `keys: --out ${taken} exists: give a new file (a key is never written over another file). (npm run keys -- --help for usage)`,
    });
    expect(readFileSync(taken, 'utf8')).toBe('something else');

    const failed = join(dir, 'failed.key');
    const rotated = await keys(['rotate', 'abcdef012345', '--stage', 'staging', '--out', failed]);
    expect(rotated.code).toBe(EXIT_FAILED);
    expect(existsSync(failed)).toBe(false);
    expect((await documents.send(new ScanCommand({ TableName: TABLE }))).Items).toEqual([]);
  });
});
