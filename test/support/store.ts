/**
 * Test support: one embedded dynalite per test file, a fresh table per call, and the Dependencies (lib/service.ts)
 * wired to it exactly as the handlers' own configuration would wire it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import {
  ensureControlTable,
  ensurePetsTable,
  startEmbeddedStore,
  type EmbeddedStore,
} from '../../local/embeddedStore.ts';
import { dependenciesFromEnvironment, type Environment, type Dependencies } from '../../lib/service.ts';

export const TEST_API_KEY = 'test-key-0123456789abcdef';
export const TEST_CURSOR_SECRET = 'test-cursor-secret-0123456789';

let store: EmbeddedStore | undefined;

/** Starts dynalite for this file; call once at the top of a test file. */
export function useEmbeddedStore(): () => string {
  beforeAll(async () => {
    store = await startEmbeddedStore();
  });
  afterAll(async () => {
    await store?.close();
    store = undefined;
  });
  return () => {
    if (!store) throw new Error('useEmbeddedStore() has not started yet');
    return store.endpoint;
  };
}

/** Dynalite for this file, and before each test a fresh environment (new tables) and the service built from it. */
export function useFreshService(): { env: Environment; service: Dependencies } {
  const endpoint = useEmbeddedStore();
  const fresh = {} as { env: Environment; service: Dependencies };
  beforeEach(async () => {
    fresh.env = await freshEnvironment(endpoint());
    fresh.service = dependenciesFromEnvironment(fresh.env);
  });
  return fresh;
}

/** The environment a deployed function would have, pointed at a new table on the embedded store. */
export async function freshEnvironment(endpoint: string, extra: Environment = {}): Promise<Environment> {
  const tableName = `pets-${randomUUID()}`;
  await ensurePetsTable(endpoint, tableName);
  await ensureControlTable(endpoint, `control-${tableName}`);
  return {
    TABLE_NAME: tableName,
    CONTROL_TABLE_NAME: `control-${tableName}`,
    DYNAMODB_ENDPOINT: endpoint,
    AWS_REGION: 'us-east-1',
    PETSTORE_API_KEYS: TEST_API_KEY,
    PETSTORE_CURSOR_SECRET: TEST_CURSOR_SECRET,
    ...extra,
  };
}
