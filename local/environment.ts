/**
 * The configuration the local API and `npm run invoke` give the handlers: the same variables a
 * deployed function reads, pointed at an embedded store. Nothing here reaches AWS.
 *
 * - DYNAMODB_ENDPOINT set: use that DynamoDB-compatible endpoint as it is.
 * - PETSTORE_IN_MEMORY=1: embedded dynalite, in memory only.
 * - otherwise: embedded dynalite persisting under `.data/` (PETSTORE_DATA_DIR to move it).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Environment } from '../lib/service.ts';
import { DEFAULT_CONTROL_TABLE } from '../lib/store/table.ts';
import { ensureControlTable, ensurePetsTable, startEmbeddedStore } from './store.ts';

export interface LocalEnvironment {
  /** The variables to run the handlers with. */
  env: Environment;
  /** Where the store is, and whether this process embeds it. */
  store: { endpoint: string; embedded: boolean; persistent: boolean };
  /** The API key generated for this run, when none was configured. */
  generatedApiKey?: string;
  close(): Promise<void>;
}

const DEFAULT_TABLE = 'pets';

export async function prepareLocalEnvironment(given: Environment = process.env): Promise<LocalEnvironment> {
  const dataDir = resolve(given.PETSTORE_DATA_DIR ?? '.data');
  const inMemory = given.PETSTORE_IN_MEMORY === '1' || given.PETSTORE_IN_MEMORY === 'true';
  const tableName = given.TABLE_NAME ?? DEFAULT_TABLE;
  const controlTableName = given.CONTROL_TABLE_NAME ?? DEFAULT_CONTROL_TABLE;
  const generatedApiKey = given.PETSTORE_API_KEYS ? undefined : `local_${randomBytes(24).toString('base64url')}`;

  let close = async () => {};
  let store: LocalEnvironment['store'];
  if (given.DYNAMODB_ENDPOINT) {
    store = { endpoint: given.DYNAMODB_ENDPOINT, embedded: false, persistent: true };
  } else if (inMemory) {
    const embedded = await startEmbeddedStore();
    store = { endpoint: embedded.endpoint, embedded: true, persistent: false };
    close = embedded.close;
  } else {
    ({ store, close } = await persistentStore(dataDir));
  }
  await ensurePetsTable(store.endpoint, tableName);
  await ensureControlTable(store.endpoint, controlTableName);

  const env: Environment = {
    ...given,
    TABLE_NAME: tableName,
    CONTROL_TABLE_NAME: controlTableName,
    DYNAMODB_ENDPOINT: store.endpoint,
    AWS_REGION: given.AWS_REGION ?? 'us-east-1',
    PETSTORE_API_KEYS: given.PETSTORE_API_KEYS ?? generatedApiKey,
    PETSTORE_CURSOR_SECRET:
      given.PETSTORE_CURSOR_SECRET ?? (store.persistent ? keptSecret(dataDir) : randomBytes(32).toString('base64url')),
  };
  return { env, store, ...(generatedApiKey ? { generatedApiKey } : {}), close };
}

/**
 * dynalite on `.data/`. LevelDB lets one process open a folder at a time, so the process that
 * holds it writes its endpoint beside it and a second process (invoke while the API runs) uses that.
 */
async function persistentStore(dataDir: string) {
  mkdirSync(dataDir, { recursive: true });
  const endpointFile = join(dataDir, 'endpoint');
  const running = existsSync(endpointFile) ? readFileSync(endpointFile, 'utf8').trim() : undefined;
  if (running && (await reachable(running))) {
    return { store: { endpoint: running, embedded: false, persistent: true }, close: async () => {} };
  }
  const embedded = await startEmbeddedStore({ path: join(dataDir, 'dynalite') });
  writeFileSync(endpointFile, embedded.endpoint);
  return {
    store: { endpoint: embedded.endpoint, embedded: true, persistent: true },
    close: async () => {
      rmSync(endpointFile, { force: true });
      await embedded.close();
    },
  };
}

async function reachable(endpoint: string): Promise<boolean> {
  try {
    await fetch(endpoint, { signal: AbortSignal.timeout(500) });
    return true;
  } catch {
    return false;
  }
}

/** A cursor secret kept beside the data, so page links survive a restart of the local API. */
function keptSecret(dataDir: string): string {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'cursor-secret');
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}
