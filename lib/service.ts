/**
 * What a handler needs (store, keys, cursor codec, clock), built from configuration alone.
 * The same code runs on AWS and locally; only these variables differ:
 *
 * - TABLE_NAME: the pets table (default `pets`).
 * - DYNAMODB_ENDPOINT: a DynamoDB-compatible endpoint (dynalite locally); unset on AWS.
 * - PETSTORE_API_KEYS: comma-separated plain-text keys (local use only).
 * - PETSTORE_CURSOR_SECRET: the HMAC secret for page cursors (at least 16 bytes).
 */
import { randomBytes } from 'node:crypto';
import { StaticApiKeys, type ApiKeyStore } from './auth.ts';
import { CursorCodec, type SecretSource } from './pagination.ts';
import { DynamoPetStore, createDocumentClient, type PetStore } from './petStore.ts';

export interface Service {
  store: PetStore;
  keys: ApiKeyStore;
  cursors: CursorCodec;
  now: () => Date;
}

export type Environment = Record<string, string | undefined>;

export function serviceFromEnvironment(env: Environment = process.env): Service {
  const documents = createDocumentClient({ region: env.AWS_REGION, endpoint: env.DYNAMODB_ENDPOINT });
  return {
    store: new DynamoPetStore(documents, env.TABLE_NAME ?? 'pets'),
    keys: apiKeysFrom(env),
    cursors: new CursorCodec(cursorSecretFrom(env)),
    now: () => new Date(),
  };
}

function apiKeysFrom(env: Environment): ApiKeyStore {
  if (!env.PETSTORE_API_KEYS) warn('No API keys are configured: every request will be answered 401.');
  return StaticApiKeys.fromList(env.PETSTORE_API_KEYS ?? '');
}

function cursorSecretFrom(env: Environment): SecretSource {
  const configured = env.PETSTORE_CURSOR_SECRET;
  if (configured) return async () => configured;
  // Good for one process only: cursors will not survive a restart or cross instances.
  warn('PETSTORE_CURSOR_SECRET is not set: page cursors are signed with a per-process secret.');
  const generated = randomBytes(32).toString('base64url');
  return async () => generated;
}

function warn(message: string): void {
  console.warn(JSON.stringify({ level: 'WARN', message }));
}

let shared: Service | undefined;

/** One service per process, shared by every handler module loaded in it. */
export function defaultService(): Service {
  shared ??= serviceFromEnvironment();
  return shared;
}
