/** The control-table records the functions read: API-key digests and the cursor secret, on dynalite. */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { digestKey } from '../../../lib/domain/apiKeys.ts';
import { ControlTableApiKeys, keyItem } from '../../../lib/store/controlTableKeys.ts';
import { controlTableCursorSecret } from '../../../lib/store/cursorSecret.ts';
import { CursorCodec } from '../../../lib/domain/pagination.ts';
import { createDocumentClient } from '../../../lib/store/dynamo.ts';
import { ensureControlTable } from '../../../local/embeddedStore.ts';
import { createHandler as createPet } from '../../../functions/createPet.ts';
import { createHandler as listPets } from '../../../functions/listPets.ts';
import { dependenciesFromEnvironment } from '../../../lib/service.ts';
import { apiEvent, call } from '../../support/events.ts';
import { freshEnvironment, useEmbeddedStore } from '../../support/store.ts';

const endpoint = useEmbeddedStore();
let documents: DynamoDBDocumentClient;
beforeAll(() => {
  documents = createDocumentClient({ endpoint: endpoint() });
});
afterAll(() => documents.destroy());

async function freshTable(): Promise<string> {
  const tableName = `control-${randomUUID()}`;
  await ensureControlTable(endpoint(), tableName);
  return tableName;
}

describe('ControlTableApiKeys', () => {
  it('serves the digest of every well-formed key item, and only of those in the apikeys partition', async () => {
    const tableName = await freshTable();
    const put = (Item: Record<string, unknown>) => documents.send(new PutCommand({ TableName: tableName, Item }));
    const createdAt = new Date().toISOString();
    await put(keyItem({ keyId: 'aaaaaaaaaaaa', sha256: digestKey('one').toString('hex'), createdAt }));
    await put(
      keyItem({ keyId: 'bbbbbbbbbbbb', sha256: digestKey('two').toString('hex'), createdAt, description: 'x' }),
    );
    await put({ pk: 'apikeys', sk: 'cccccccccccc', sha256: 'secret-looking-garbage', createdAt });
    await put({ pk: 'idempotency#00', sk: 'record', sha256: digestKey('three').toString('hex'), createdAt });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const digests = await new ControlTableApiKeys({ documents, tableName }).keyDigests();
      expect(digests.map(({ digest: d }) => d.toString('hex')).sort()).toEqual(
        [digestKey('one'), digestKey('two')].map((d) => d.toString('hex')).sort(),
      );
      const lines = warn.mock.calls.map(([line]) => String(line));
      expect(lines.some((line) => line.includes('cccccccccccc'))).toBe(true);
      expect(lines.join('\n')).not.toContain('secret-looking-garbage');
    } finally {
      warn.mockRestore();
    }
  });

  it('makes no request before the first call', async () => {
    const send = vi.fn();
    new ControlTableApiKeys({ documents: { send } as unknown as DynamoDBDocumentClient, tableName: 'unused' });
    expect(send).not.toHaveBeenCalled();
  });
});

describe('controlTableCursorSecret', () => {
  it('creates one secret on first use, shared by every instance, even when they start together', async () => {
    const tableName = await freshTable();
    const instances = Array.from({ length: 4 }, () => controlTableCursorSecret({ documents, tableName }));
    const secrets = await Promise.all(instances.map(async (secret) => (await secret()).signing.value));
    expect(new Set(secrets).size).toBe(1);
    expect(Buffer.byteLength(secrets[0]!)).toBeGreaterThanOrEqual(32);
    const { Item } = await documents.send(
      new GetCommand({ TableName: tableName, Key: { pk: 'cursor-secret', sk: 'current' } }),
    );
    expect(Item?.value).toBe(secrets[0]);
    // A later instance (another container, a restart) reads the same one.
    expect((await controlTableCursorSecret({ documents, tableName })()).signing.value).toBe(secrets[0]);
  });

  it('signs cursors that another instance accepts', async () => {
    const tableName = await freshTable();
    const cursor = await new CursorCodec(controlTableCursorSecret({ documents, tableName })).encode(42, 'sold');
    await expect(
      new CursorCodec(controlTableCursorSecret({ documents, tableName })).decode(cursor, 'sold'),
    ).resolves.toBe(42);
  });
});

describe('a service configured as deployed (no key or secret in the environment)', () => {
  it('authenticates with the control table keys and pages with the control table secret', async () => {
    const { PETSTORE_API_KEYS: _keys, PETSTORE_CURSOR_SECRET: _secret, ...env } = await freshEnvironment(endpoint());
    const key = 'psk_0123456789ab_deployed-key-deployed-key-deployed-key-0123456';
    await documents.send(
      new PutCommand({
        TableName: env.CONTROL_TABLE_NAME,
        Item: keyItem({
          keyId: '0123456789ab',
          sha256: digestKey(key).toString('hex'),
          createdAt: new Date().toISOString(),
        }),
      }),
    );
    const service = dependenciesFromEnvironment(env);
    const authorized = (event: ReturnType<typeof apiEvent>) => {
      event.headers.Authorization = `Bearer ${key}`;
      return event;
    };

    for (const name of ['A', 'B', 'C']) {
      expect(
        (await call(createPet(service), authorized(apiEvent('POST', '/pets', { body: { name, categoryId: 1 } }))))
          .status,
      ).toBe(201);
    }
    const first = await call(listPets(service), authorized(apiEvent('GET', '/pets?limit=2')));
    expect(first.status).toBe(200);
    const next = /^<([^>]+)>; rel="next"$/.exec(String(first.headers.link))?.[1];
    expect(next).toBeDefined();
    // Another instance (a new service) reads the same secret, so it accepts the cursor.
    const second = await call(
      listPets(dependenciesFromEnvironment(env)),
      authorized(apiEvent('GET', `/pets${new URL(next!).search}`)),
    );
    expect(second.status).toBe(200);
    expect((second.body as unknown[]).length).toBe(1);

    const event = apiEvent('GET', '/pets');
    event.headers.Authorization = 'Bearer psk_0123456789ab_not-the-key';
    expect((await call(listPets(service), event)).status).toBe(401);
  });
});
