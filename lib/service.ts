/**
 * What a handler needs (store, keys, clock, the control table), built from configuration alone.
 * The same code runs on AWS and locally; only these variables differ:
 *
 * - TABLE_NAME: the pets table (default `pets`).
 * - CONTROL_TABLE_NAME: the control table (default `petstore-control`): API keys, cursor secret,
 *   idempotency records.
 * - STORE_BUDGET_MS: each request's time budget for store calls (default 2500).
 * - DYNAMODB_ATTEMPT_TIMEOUT_MS: one DynamoDB attempt's connect and answer timeouts (default 1000).
 * - DYNAMODB_ENDPOINT: a DynamoDB-compatible endpoint (dynalite locally); unset on AWS.
 * - PETSTORE_API_KEYS: comma-separated plain-text keys (local use only; wins when set); else the
 *   keys' digests are read from the control table (deployed).
 * - PETSTORE_CURSOR_SECRET: the HMAC secret for page cursors (at least 16 bytes; local use); else
 *   listPets keeps one in the control table (lib/cursorSecret.ts).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { StaticApiKeys, type ApiKeyStore } from './auth.ts';
import { ControlTableApiKeys } from './controlTableKeys.ts';
import { STORE_BUDGET_MS } from './deadline.ts';
import { DynamoPetStore, createDocumentClient, type PetStore } from './petStore.ts';
import { DEFAULT_CONTROL_TABLE } from './table.ts';

export interface ControlTableAccess {
  documents: DynamoDBDocumentClient;
  tableName: string;
}

export interface Service {
  store: PetStore;
  keys: ApiKeyStore;
  now: () => Date;
  /** The control table, through the pets table's own client. */
  control: ControlTableAccess;
  /** A cursor secret given in configuration (local use); when unset, the control table keeps one. */
  cursorSecret?: string | undefined;
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
  const control = { documents, tableName: env.CONTROL_TABLE_NAME ?? DEFAULT_CONTROL_TABLE };
  return {
    store: new DynamoPetStore(documents, env.TABLE_NAME ?? 'pets'),
    keys: env.PETSTORE_API_KEYS ? StaticApiKeys.fromList(env.PETSTORE_API_KEYS) : new ControlTableApiKeys(control),
    now: () => new Date(),
    control,
    cursorSecret: env.PETSTORE_CURSOR_SECRET || undefined,
    storeBudgetMs: Number(env.STORE_BUDGET_MS) || STORE_BUDGET_MS,
  };
}

let shared: Service | undefined;

/** One service per process, shared by every handler module loaded in it. */
export function defaultService(): Service {
  shared ??= serviceFromEnvironment();
  return shared;
}
