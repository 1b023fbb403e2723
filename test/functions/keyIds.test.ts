/**
 * One key id everywhere: the id the keys CLI prints (create, list) and takes (revoke) is the
 * request log's `keyId`, so a responder goes from a log line straight to `npm run keys -- revoke <id>`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createHandler as createPetHandler } from '../../functions/createPet.ts';
import { createHandler as getPetHandler } from '../../functions/getPet.ts';
import { setRequestLogWriter, type RequestLogLine } from '../../lib/http/requestLog.ts';
import { dependenciesFromEnvironment, type Environment } from '../../lib/service.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { EXIT_OK, generateApiKey } from '../../tools/keys/keys.ts';
import { apiEvent, call } from '../support/events.ts';
import { keyIn, runKeysCollected } from '../support/keys.ts';
import { freshEnvironment, useEmbeddedStore } from '../support/store.ts';

const endpoint = useEmbeddedStore();
let documents: DynamoDBDocumentClient;
beforeAll(() => {
  documents = createDocumentClient({ endpoint: endpoint() });
});
afterAll(() => documents.destroy());

let lines: RequestLogLine[] = [];
afterEach(() => setRequestLogWriter(() => undefined));
const capture = () => {
  lines = [];
  setRequestLogWriter((line) => lines.push(JSON.parse(line) as RequestLogLine));
};

async function cli(table: string, ...argv: string[]): Promise<string> {
  const run = await runKeysCollected([...argv, '--stage', 'staging', '--table', table], { client: documents, env: {} });
  expect(run.code).toBe(EXIT_OK);
  return run.out;
}

/** The environment of a deployed function: keys and cursor secret from the control table. */
async function deployedEnvironment(): Promise<Environment> {
  const { PETSTORE_API_KEYS: _keys, PETSTORE_CURSOR_SECRET: _secret, ...env } = await freshEnvironment(endpoint());
  return env;
}

describe('the key id', () => {
  it('in the request log is the id keys list prints, and revoke takes', async () => {
    const env = await deployedEnvironment();
    const table = env.CONTROL_TABLE_NAME!;
    await cli(table, 'create', '--description', 'another partner');
    const key = keyIn(await cli(table, 'create', '--description', 'the partner in the log'));
    expect(key).toBeDefined();

    capture();
    const event = apiEvent('POST', '/pets', {
      body: { name: 'Rex', categoryId: 1 },
      headers: { Authorization: `Bearer ${key}` },
    });
    expect((await call(createPetHandler(dependenciesFromEnvironment(env)), event)).status).toBe(201);
    const logged = lines.at(-1)?.keyId;

    const listed = (await cli(table, 'list')).split('\n').find((row) => row.endsWith('the partner in the log'));
    expect(listed?.split(/\s+/)[0]).toBe(logged);
    expect(await cli(table, 'revoke', logged!)).toContain(`Revoked API key ${logged}`);
  });

  it('of a psk_ key given locally (PETSTORE_API_KEYS) is the id in the key, as the CLI would name it', async () => {
    const { key, keyId } = generateApiKey();
    const env = await freshEnvironment(endpoint(), { PETSTORE_API_KEYS: `other-local-key-0123456789,${key}` });
    capture();
    await call(
      getPetHandler(dependenciesFromEnvironment(env)),
      apiEvent('GET', '/pets/1', { headers: { Authorization: `Bearer ${key}` } }),
    );
    expect(lines.at(-1)).toMatchObject({ status: 404, keyId });
  });
});
