import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { prepareLocalEnvironment } from '../../local/environment.ts';
import { startEmbeddedStore } from '../../local/embeddedStore.ts';

const documents = (endpoint: string) => createDocumentClient({ endpoint });

describe('the local environment', () => {
  it('keeps data under its folder across restarts, and shares the open store with a second process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-data-'));
    const first = await prepareLocalEnvironment({ PETSTORE_DATA_DIR: dir });
    expect(first.store).toMatchObject({ embedded: true, persistent: true });
    await documents(first.store.endpoint).send(
      new PutCommand({ TableName: 'pets', Item: { id: 1, name: 'Kept', categoryId: 1 } }),
    );

    const second = await prepareLocalEnvironment({ PETSTORE_DATA_DIR: dir });
    expect(second.store).toEqual({
      endpoint: first.store.endpoint,
      embedded: false,
      persistent: true,
      sharedWith: resolve(dir),
    });
    expect(second.env.PETSTORE_CURSOR_SECRET).toBe(first.env.PETSTORE_CURSOR_SECRET);
    expect(first.generatedApiKey).toMatch(/^local_[\w-]{32}$/);
    expect(first.apiKeyFile).toBe(join(dir, 'api-key'));
    expect(second.env.PETSTORE_API_KEYS).toBe(first.generatedApiKey);
    await second.close();
    await first.close();
    expect(existsSync(join(dir, 'endpoint'))).toBe(false);

    const restarted = await prepareLocalEnvironment({ PETSTORE_DATA_DIR: dir });
    const { Item } = await documents(restarted.store.endpoint).send(
      new GetCommand({ TableName: 'pets', Key: { id: 1 } }),
    );
    expect(Item).toEqual({ id: 1, name: 'Kept', categoryId: 1 });
    expect(restarted.env.PETSTORE_CURSOR_SECRET).toBe(first.env.PETSTORE_CURSOR_SECRET);
    expect(restarted.generatedApiKey).toBe(first.generatedApiKey);
    await restarted.close();
  });

  it('keeps nothing with PETSTORE_IN_MEMORY=1', async () => {
    const local = await prepareLocalEnvironment({ PETSTORE_IN_MEMORY: '1', PETSTORE_API_KEYS: 'k' });
    expect(local.store).toMatchObject({ embedded: true, persistent: false });
    expect(local.generatedApiKey).toBeUndefined();
    expect(local.env.PETSTORE_API_KEYS).toBe('k');
    await local.close();
  });

  it('takes keys in the b64token characters a Bearer header carries, a read key as read:<key>', async () => {
    const keys = 'read:reader-key, writer_key.1~+/=,write:w';
    const local = await prepareLocalEnvironment({ PETSTORE_IN_MEMORY: '1', PETSTORE_API_KEYS: keys });
    expect(local.env.PETSTORE_API_KEYS).toBe(keys);
    await local.close();
  });

  it('generates a fresh key per run in memory, and writes none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-data-'));
    const runs = [];
    for (let i = 0; i < 2; i++) {
      const local = await prepareLocalEnvironment({ PETSTORE_IN_MEMORY: '1', PETSTORE_DATA_DIR: dir });
      runs.push(local.generatedApiKey);
      expect(local.apiKeyFile).toBeUndefined();
      await local.close();
    }
    expect(runs[0]).toMatch(/^local_[\w-]{32}$/);
    expect(runs[1]).not.toBe(runs[0]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('uses DYNAMODB_ENDPOINT as it is, creating the table and its index there', async () => {
    const other = await startEmbeddedStore();
    // A data folder that does not exist yet, as on a fresh clone: the kept cursor secret creates it.
    const dataDir = join(mkdtempSync(join(tmpdir(), 'petstore-data-')), 'not-yet');
    const local = await prepareLocalEnvironment({
      DYNAMODB_ENDPOINT: other.endpoint,
      TABLE_NAME: 'elsewhere',
      PETSTORE_DATA_DIR: dataDir,
    });
    expect(local.store).toMatchObject({ endpoint: other.endpoint, embedded: false });
    expect(local.env).toMatchObject({ DYNAMODB_ENDPOINT: other.endpoint, TABLE_NAME: 'elsewhere' });
    expect(local.generatedApiKey).toMatch(/^local_[\w-]{32}$/);
    expect(existsSync(join(dataDir, 'cursor-secret'))).toBe(true);
    await documents(other.endpoint).send(
      new PutCommand({ TableName: 'elsewhere', Item: { id: 2, name: 'There', categoryId: 1, status: 'sold' } }),
    );
    await local.close();
    await other.close();
  });
});
