/**
 * The configuration the local API and `npm run invoke` give the handlers: the same variables a
 * deployed function reads, pointed at an embedded store. Nothing here reaches AWS.
 *
 * - DYNAMODB_ENDPOINT set: use that DynamoDB-compatible endpoint as it is.
 * - PETSTORE_IN_MEMORY=1: embedded dynalite, in memory only.
 * - otherwise: embedded dynalite persisting under `.data/` (PETSTORE_DATA_DIR to move it).
 *
 * Without PETSTORE_API_KEYS a key is generated; with a persistent store it is kept beside the data
 * (`.data/api-key`, as the cursor secret), so the data and the key that reads it survive a restart together.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { MIN_CURSOR_SECRET_BYTES } from '../lib/domain/pagination.ts';
import type { Environment } from '../lib/service.ts';
import { DEFAULT_CONTROL_TABLE } from '../lib/store/table.ts';
import { ensureControlTable, ensurePetsTable, startEmbeddedStore } from './embeddedStore.ts';
import { persistentStore } from './persistedStore.ts';
import { checkSettings, inMemoryOf, keepDamagedOf, makeDataDir } from './settings.ts';
import { LocalSetupError } from '@petstore/local-kit/setupError';

export interface LocalEnvironment {
  /** The variables to run the handlers with. */
  env: Environment;
  /**
   * Where the store is, and whether this process embeds it; `sharedWith`: the data folder whose
   * store another process (a local API already running on it) serves, when this one uses that.
   */
  store: { endpoint: string; embedded: boolean; persistent: boolean; sharedWith?: string };
  /** When sharing another process's store: settled once that process has stopped (its port may be anyone's then). */
  holderGone?: Promise<void>;
  /** The API key generated when none was configured: for this run, or kept from an earlier one. */
  generatedApiKey?: string;
  /** Where the generated key is kept, when the store is persistent. */
  apiKeyFile?: string;
  close(): Promise<void>;
}

const DEFAULT_TABLE = 'pets';

export { LocalSetupError };

export async function prepareLocalEnvironment(given: Environment = process.env): Promise<LocalEnvironment> {
  checkSettings(given);
  const dataDir = resolve(given.PETSTORE_DATA_DIR ?? '.data');
  const inMemory = inMemoryOf(given);
  const tableName = given.TABLE_NAME ?? DEFAULT_TABLE;
  const controlTableName = given.CONTROL_TABLE_NAME ?? DEFAULT_CONTROL_TABLE;

  // Settings are checked before a store starts, so a refusal leaves nothing behind (no endpoint file).
  const persistent = Boolean(given.DYNAMODB_ENDPOINT) || !inMemory;
  if (persistent) makeDataDir(dataDir);
  const cursorSecret = cursorSecretOf(given, persistent ? join(dataDir, 'cursor-secret') : undefined);

  let close = async () => {};
  let store: LocalEnvironment['store'];
  let holderGone: Promise<void> | undefined;
  if (given.DYNAMODB_ENDPOINT) {
    store = { endpoint: given.DYNAMODB_ENDPOINT, embedded: false, persistent: true };
  } else if (inMemory) {
    const embedded = await startEmbeddedStore();
    store = { endpoint: embedded.endpoint, embedded: true, persistent: false };
    close = embedded.close;
  } else {
    ({ store, close, holderGone } = await persistentStore(dataDir, tableName, controlTableName, keepDamagedOf(given)));
  }
  try {
    await ensurePetsTable(store.endpoint, tableName);
    await ensureControlTable(store.endpoint, controlTableName);
  } catch (error) {
    await close();
    throw given.DYNAMODB_ENDPOINT ? unusableEndpoint(given.DYNAMODB_ENDPOINT, error) : error;
  }
  const apiKeyFile = given.PETSTORE_API_KEYS || !store.persistent ? undefined : join(dataDir, 'api-key');
  const generatedApiKey = given.PETSTORE_API_KEYS ? undefined : apiKeyFile ? kept(apiKeyFile, newApiKey) : newApiKey();

  const env: Environment = {
    ...given,
    TABLE_NAME: tableName,
    CONTROL_TABLE_NAME: controlTableName,
    DYNAMODB_ENDPOINT: store.endpoint,
    AWS_REGION: given.AWS_REGION ?? 'us-east-1',
    PETSTORE_API_KEYS: given.PETSTORE_API_KEYS ?? generatedApiKey,
    PETSTORE_CURSOR_SECRET: cursorSecret,
  };
  return {
    env,
    store,
    ...(holderGone ? { holderGone } : {}),
    ...(generatedApiKey ? { generatedApiKey } : {}),
    ...(apiKeyFile ? { apiKeyFile } : {}),
    close,
  };
}

/** DYNAMODB_ENDPOINT that does not answer, or not as DynamoDB does: one line, and the way out. */
function unusableEndpoint(endpoint: string, error: unknown): LocalSetupError {
  const { name, code, message } = error as { name?: string; code?: string; message?: string };
  const why = code ?? `${name ?? 'Error'}: ${(message ?? '').split('\n')[0]}`;
  return new LocalSetupError(
    `DYNAMODB_ENDPOINT ${endpoint} cannot be used as a DynamoDB store (${why}): start that store, or unset DYNAMODB_ENDPOINT to use the embedded one.`,
  );
}

/**
 * PETSTORE_CURSOR_SECRET, else the one kept in `file` (made on first use), else one for this run.
 * One too short to sign stops the start: it would start, then answer 500 to every list with a next page.
 */
function cursorSecretOf(given: Environment, file: string | undefined): string {
  const secret = given.PETSTORE_CURSOR_SECRET ?? (file ? kept(file, newCursorSecret) : newCursorSecret());
  const bytes = Buffer.byteLength(secret);
  if (bytes >= MIN_CURSOR_SECRET_BYTES) return secret;
  const fix =
    given.PETSTORE_CURSOR_SECRET !== undefined
      ? `PETSTORE_CURSOR_SECRET is ${bytes} bytes: give one of at least ${MIN_CURSOR_SECRET_BYTES}, or unset it to have one made`
      : `${file} holds a ${bytes}-byte cursor secret: delete it and a new one is made at the next start (page links already given stop working)`;
  throw new LocalSetupError(`${fix}; a cursor secret must be at least ${MIN_CURSOR_SECRET_BYTES} bytes.`);
}

const newApiKey = () => `local_${randomBytes(24).toString('base64url')}`;
const newCursorSecret = () => randomBytes(32).toString('base64url');

/**
 * A secret kept in `file` (mode 0600), made on first use: the cursor secret, so page links survive
 * a restart, and the generated API key, so saved requests do. Written aside and linked into place,
 * so of two processes starting at once one writes it and both read the same whole value.
 */
function kept(file: string, make: () => string): string {
  mkdirSync(dirname(file), { recursive: true });
  if (!existsSync(file)) {
    const aside = `${file}.${process.pid}.new`;
    writeFileSync(aside, make(), { mode: 0o600 });
    try {
      linkSync(aside, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      rmSync(aside, { force: true });
    }
  }
  let value: string;
  try {
    value = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new LocalSetupError(
      `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}): remove it and a new one is made at the next start.`,
    );
  }
  if (!value) throw new LocalSetupError(`${file} is empty: delete it and a new one is made at the next start.`);
  return value;
}
