/**
 * What a handler needs (store, keys, cursor codec, clock), built from configuration alone.
 * The same code runs on AWS and locally; only these variables differ:
 *
 * - TABLE_NAME: the pets table (default `pets`).
 * - STORE_BUDGET_MS: each request's time budget for store calls (default 2500).
 * - DYNAMODB_ATTEMPT_TIMEOUT_MS: one DynamoDB attempt's connect and answer timeouts (default 1000).
 * - CONTROL_TABLE_NAME: the control table, holding idempotency records (default `petstore-control`).
 * - DYNAMODB_ENDPOINT: a DynamoDB-compatible endpoint (dynalite locally); unset on AWS.
 * - PETSTORE_API_KEYS: comma-separated plain-text keys (local use only; wins when set).
 * - PETSTORE_API_KEYS_PARAMETER_PATH: SSM path holding the keys' SHA-256 hashes (deployed).
 * - PETSTORE_CURSOR_SECRET: the HMAC secret for page cursors (at least 16 bytes; local use).
 * - PETSTORE_CURSOR_SECRET_ARN: a Secrets Manager secret holding it (deployed).
 */
import { randomBytes } from 'node:crypto';
import { StaticApiKeys, type ApiKeyStore } from './auth.ts';
import { warn } from './log.ts';
import { CursorCodec, type SecretSource } from './pagination.ts';
import { ParameterStoreApiKeys } from './parameterStoreKeys.ts';
import { STORE_BUDGET_MS } from './deadline.ts';
import { IdempotentCreates } from './idempotency.ts';
import { DynamoPetStore, createDocumentClient, type PetStore } from './petStore.ts';
import { secretsManagerSecret } from './secretsManagerSecret.ts';
import { DEFAULT_CONTROL_TABLE } from './table.ts';

export interface Service {
  store: PetStore;
  /** createPet with an Idempotency-Key. */
  idempotency: IdempotentCreates;
  keys: ApiKeyStore;
  cursors: CursorCodec;
  now: () => Date;
  /** Each request's budget for store calls (lib/deadline.ts); STORE_BUDGET_MS, default 2,500. */
  storeBudgetMs?: number;
}

export type Environment = Record<string, string | undefined>;

export function serviceFromEnvironment(env: Environment = process.env): Service {
  const documents = createDocumentClient({
    region: env.AWS_REGION,
    endpoint: env.DYNAMODB_ENDPOINT,
    attemptTimeoutMs: Number(env.DYNAMODB_ATTEMPT_TIMEOUT_MS) || undefined,
  });
  const store = new DynamoPetStore(documents, env.TABLE_NAME ?? 'pets');
  return {
    store,
    idempotency: new IdempotentCreates(documents, env.CONTROL_TABLE_NAME ?? DEFAULT_CONTROL_TABLE, store),
    keys: apiKeysFrom(env),
    cursors: new CursorCodec(cursorSecretFrom(env)),
    now: () => new Date(),
    storeBudgetMs: Number(env.STORE_BUDGET_MS) || STORE_BUDGET_MS,
  };
}

function apiKeysFrom(env: Environment): ApiKeyStore {
  if (env.PETSTORE_API_KEYS) return StaticApiKeys.fromList(env.PETSTORE_API_KEYS);
  if (env.PETSTORE_API_KEYS_PARAMETER_PATH) return new ParameterStoreApiKeys({ path: env.PETSTORE_API_KEYS_PARAMETER_PATH });
  warn('No API keys are configured: every request will be answered 401.');
  return new StaticApiKeys([]);
}

function cursorSecretFrom(env: Environment): SecretSource {
  const configured = env.PETSTORE_CURSOR_SECRET;
  if (configured) return async () => configured;
  if (env.PETSTORE_CURSOR_SECRET_ARN) return secretsManagerSecret({ secretId: env.PETSTORE_CURSOR_SECRET_ARN });
  // Good for one process only: cursors will not survive a restart or cross instances. Made on first
  // use, so functions that never sign a cursor (createPet, getPet) neither pay for it nor warn.
  let generated: string | undefined;
  return async () => {
    if (generated === undefined) {
      warn('PETSTORE_CURSOR_SECRET is not set: page cursors are signed with a per-process secret.');
      generated = randomBytes(32).toString('base64url');
    }
    return generated;
  };
}

let shared: Service | undefined;

/** One service per process, shared by every handler module loaded in it. */
export function defaultService(): Service {
  shared ??= serviceFromEnvironment();
  return shared;
}
