/** The key authorizer's answers (lib/http/authorizer.ts), as API Gateway reads them. */
import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { StaticApiKeys, digestKey, keyIdOfKey, type ApiKeyStore } from '../../../lib/domain/apiKeys.ts';
import { KEY_USE_RECORD_INTERVAL_MS, MAX_KEY_LIFETIME_MS } from '../../../lib/domain/keyLifetime.ts';
import { AUTHORIZER_OPERATION, UNAUTHORIZED, createAuthorizer, stageArnOf } from '../../../lib/http/authorizer.ts';
import { ControlTableApiKeys, keyItem, keyItemKey } from '../../../lib/store/controlTableKeys.ts';
import { createDocumentClient } from '../../../lib/store/dynamo.ts';
import { KeyUses } from '../../../lib/store/keyUses.ts';
import { ensureControlTable } from '../../../local/embeddedStore.ts';
import { generateApiKey } from '../../../tools/keys/keys.ts';
import { startFaultProxy, type FaultProxy } from '@petstore/stage-emulator/faultProxy';
import { useEmbeddedStore } from '../../support/store.ts';

const METHOD_ARN = 'arn:aws:execute-api:us-east-1:123456789012:abc123/v1/GET/pets/7';
const event = (
  headers: Record<string, string>,
  multiValueHeaders?: Record<string, string[]>,
): APIGatewayRequestAuthorizerEvent =>
  ({
    type: 'REQUEST',
    methodArn: METHOD_ARN,
    headers,
    ...(multiValueHeaders ? { multiValueHeaders } : {}),
  }) as unknown as APIGatewayRequestAuthorizerEvent;

describe('the key authorizer', () => {
  const { key } = generateApiKey();
  const authorize = createAuthorizer(new StaticApiKeys([key]));

  it('allows a valid key on the whole stage, naming it by the id keys list prints and handing over its digest as usageIdentifierKey', async () => {
    const result = await authorize(event({ AUTHORIZATION: `Bearer ${key}` }));
    const digest = digestKey(key);
    expect(result).toEqual({
      principalId: keyIdOfKey(key),
      policyDocument: {
        Version: '2012-10-17',
        Statement: [
          {
            Action: 'execute-api:Invoke',
            Effect: 'Allow',
            Resource: ['arn:aws:execute-api:us-east-1:123456789012:abc123/v1/*'],
          },
        ],
      },
      context: { keyId: keyIdOfKey(key), keyDigest: digest.toString('hex'), scope: 'write' },
      usageIdentifierKey: digest.toString('hex'),
    });
    expect(JSON.stringify(result)).not.toContain(key);
  });

  it.each([
    [{}],
    [{ Authorization: 'Bearer nope' }],
    [{ Authorization: `Basic ${key}` }],
    [{ Authorization: `Bearer ${generateApiKey().key}` }],
  ])('refuses %j with exactly "Unauthorized", the error API Gateway answers 401', async (headers) => {
    await expect(authorize(event(headers))).rejects.toThrow(new Error(UNAUTHORIZED));
  });

  it('refuses a request with more than one Authorization value, whichever of them is a valid key', async () => {
    const other = `Bearer ${generateApiKey().key}`;
    const valid = `Bearer ${key}`;
    await expect(authorize(event({ Authorization: valid }, { Authorization: [other, valid] }))).rejects.toThrow(
      new Error(UNAUTHORIZED),
    );
    await expect(
      authorize(event({ authorization: valid }, { Authorization: [other], authorization: [valid] })),
    ).rejects.toThrow(new Error(UNAUTHORIZED));
    await expect(authorize(event({ Authorization: valid }, { Authorization: [valid] }))).resolves.toMatchObject({
      principalId: keyIdOfKey(key),
    });
  });

  it('fails otherwise (AUTHORIZER_FAILURE, 503) when the key store cannot be read', async () => {
    const broken: ApiKeyStore = { keyDigests: () => Promise.reject(new Error('table unreachable')) };
    const failed = await createAuthorizer(broken)(event({ Authorization: `Bearer ${key}` })).catch(
      (error: Error) => error,
    );
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).not.toBe(UNAUTHORIZED);
  });

  it('covers every method and path of the stage', () => {
    expect(stageArnOf('arn:aws:execute-api:eu-west-1:1:api/v1/POST/pets')).toBe(
      'arn:aws:execute-api:eu-west-1:1:api/v1/*',
    );
  });

  it("allows a read key only the stage's GET methods, whichever method asked, and hands its scope on", async () => {
    const { key: readKey } = generateApiKey();
    const both = createAuthorizer(new StaticApiKeys([key, `read:${readKey}`]));
    for (const methodArn of [METHOD_ARN, 'arn:aws:execute-api:us-east-1:123456789012:abc123/v1/POST/pets']) {
      const read = await both({ ...event({ Authorization: `Bearer ${readKey}` }), methodArn });
      expect(read.policyDocument.Statement).toEqual([
        {
          Action: 'execute-api:Invoke',
          Effect: 'Allow',
          Resource: ['arn:aws:execute-api:us-east-1:123456789012:abc123/v1/GET/*'],
        },
      ]);
      expect(read.context).toMatchObject({ keyId: keyIdOfKey(readKey), scope: 'read' });
      const write = await both({ ...event({ Authorization: `Bearer ${key}` }), methodArn });
      expect(write.context).toMatchObject({ scope: 'write' });
      expect((write.policyDocument.Statement[0] as { Resource: string[] }).Resource).toEqual([stageArnOf(methodArn)]);
    }
  });
});

describe('the key authorizer over the control table (dynalite, through a fault proxy)', () => {
  const endpoint = useEmbeddedStore();
  let proxy: FaultProxy;
  let documents: DynamoDBDocumentClient;
  let direct: DynamoDBDocumentClient;
  let tableName: string;
  let errors: string[];
  const operations: string[] = [];
  const DAY = 86_400_000;

  beforeAll(async () => {
    proxy = await startFaultProxy(endpoint());
    proxy.observe = (operation) => operations.push(operation);
    documents = createDocumentClient({ endpoint: proxy.endpoint });
    direct = createDocumentClient({ endpoint: endpoint() });
  });
  afterAll(async () => {
    documents.destroy();
    direct.destroy();
    await proxy.close();
  });
  beforeEach(async () => {
    tableName = `control-${randomUUID()}`;
    await ensureControlTable(endpoint(), tableName);
    proxy.fault = undefined;
    operations.length = 0;
    errors = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void errors.push(line));
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** A key's item as `npm run keys` writes it, created `ageMs` ago, expiring at `expiresAt` (none: a key from before expiry). */
  async function storedKey(ageMs: number, expiresAt?: number) {
    const { key, keyId } = generateApiKey();
    const createdAt = new Date(Date.now() - ageMs).toISOString();
    const item = keyItem({
      keyId,
      sha256: digestKey(key).toString('hex'),
      createdAt,
      ...(expiresAt === undefined ? {} : { expiresAt: new Date(expiresAt).toISOString() }),
    });
    await direct.send(new PutCommand({ TableName: tableName, Item: item }));
    return { key, keyId };
  }

  const authorizerOver = (now?: () => number) => {
    const keys = new ControlTableApiKeys({ documents, tableName, ...(now ? { now } : {}) });
    const uses = new KeyUses(documents, tableName, now);
    return createAuthorizer(keys, {
      recordUse: (keyId, deadline) => uses.record(keyId, deadline),
      ...(now ? { now } : {}),
    });
  };

  it('refuses a key past its expiresAt, and a key without one (issued before keys expired) older than the maximum lifetime, as it refuses an unknown key', async () => {
    const expired = await storedKey(10 * DAY, Date.now() - 1);
    const legacyExpired = await storedKey(MAX_KEY_LIFETIME_MS + DAY);
    const legacyValid = await storedKey(10 * DAY);
    const valid = await storedKey(DAY, Date.now() + DAY);
    const authorize = authorizerOver();
    for (const { key } of [expired, legacyExpired])
      await expect(authorize(event({ Authorization: `Bearer ${key}` }))).rejects.toThrow(new Error(UNAUTHORIZED));
    const allowed = await authorize(event({ Authorization: `Bearer ${valid.key}` }));
    expect(allowed.context).toMatchObject({
      keyId: valid.keyId,
      expiresAt: String(Date.parse((await itemOf(valid.keyId)).expiresAt!)),
    });
    const legacy = await authorize(event({ Authorization: `Bearer ${legacyValid.key}` }));
    expect(Number(legacy.context!.expiresAt)).toBe(
      Date.parse((await itemOf(legacyValid.keyId)).createdAt!) + MAX_KEY_LIFETIME_MS,
    );
  });

  it('refuses a key the moment it expires, on the digests it already holds', async () => {
    let now = Date.now();
    const { key } = await storedKey(DAY, now + 60_000);
    const authorize = authorizerOver(() => now);
    await expect(authorize(event({ Authorization: `Bearer ${key}` }))).resolves.toMatchObject({
      principalId: expect.any(String),
    });
    const queries = operations.filter((operation) => operation === 'Query').length;
    now += 60_000;
    await expect(authorize(event({ Authorization: `Bearer ${key}` }))).rejects.toThrow(new Error(UNAUTHORIZED));
    expect(operations.filter((operation) => operation === 'Query')).toHaveLength(queries);
  });

  it('gives up reading the keys at its store deadline: a hung table is a 503 within the budget, with one ERROR line, not a wait for the SDK', async () => {
    const { key } = await storedKey(DAY, Date.now() + DAY);
    proxy.fault = { kind: 'hang', operations: ['Query'] };
    const keys = new ControlTableApiKeys({ documents, tableName });
    const authorize = createAuthorizer(keys, { storeBudgetMs: 300 });
    const started = performance.now();
    const failed = await authorize(event({ Authorization: `Bearer ${key}` }), {
      getRemainingTimeInMillis: () => 10_000,
      awsRequestId: 'r-1',
    }).catch((error: Error) => error);
    const tookMs = performance.now() - started;
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).not.toBe(UNAUTHORIZED);
    // The SDK alone (1 s per attempt, 3 attempts) would take 3 s and more.
    expect(tookMs).toBeLessThan(1_500);
    expect(errors.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({
        level: 'ERROR',
        operation: AUTHORIZER_OPERATION,
        awsRequestId: 'r-1',
        name: 'TimeoutError',
      }),
    ]);
  });

  it("records a key's last use with one conditional update per interval, however many requests", async () => {
    let now = Date.now();
    const { key, keyId } = await storedKey(DAY, now + 30 * DAY);
    const authorize = authorizerOver(() => now);
    for (let i = 0; i < 5; i++) await authorize(event({ Authorization: `Bearer ${key}` }));
    expect(operations.filter((operation) => operation === 'UpdateItem')).toHaveLength(1);
    expect((await itemOf(keyId)).lastUsedAt).toBe(new Date(now).toISOString());

    // A second sandbox within the interval tries once, and its condition refuses the write.
    const second = authorizerOver(() => now + 1_000);
    await second(event({ Authorization: `Bearer ${key}` }));
    expect(operations.filter((operation) => operation === 'UpdateItem')).toHaveLength(2);
    expect((await itemOf(keyId)).lastUsedAt).toBe(new Date(now).toISOString());

    now += KEY_USE_RECORD_INTERVAL_MS;
    await authorize(event({ Authorization: `Bearer ${key}` }));
    expect(operations.filter((operation) => operation === 'UpdateItem')).toHaveLength(3);
    expect((await itemOf(keyId)).lastUsedAt).toBe(new Date(now).toISOString());
    expect(errors).toEqual([]);
  });

  it('never creates the item of a key revoked after it was read, and answers the request all the same', async () => {
    const { key, keyId } = await storedKey(DAY, Date.now() + DAY);
    const keys = new ControlTableApiKeys({ documents, tableName });
    await keys.keyDigests();
    await direct.send(new DeleteCommand({ TableName: tableName, Key: keyItemKey(keyId) }));
    const uses = new KeyUses(documents, tableName);
    const authorize = createAuthorizer(keys, { recordUse: (id, deadline) => uses.record(id, deadline) });
    await expect(authorize(event({ Authorization: `Bearer ${key}` }))).resolves.toMatchObject({ principalId: keyId });
    expect(await direct.send(new GetCommand({ TableName: tableName, Key: keyItemKey(keyId) }))).not.toHaveProperty(
      'Item',
    );
  });

  async function itemOf(keyId: string): Promise<Record<string, string | undefined>> {
    return (await direct.send(new GetCommand({ TableName: tableName, Key: keyItemKey(keyId), ConsistentRead: true })))
      .Item as Record<string, string | undefined>;
  }
});
