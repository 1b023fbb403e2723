/**
 * The composition root: what a handler needs (the tables, keys, clock), built from configuration
 * alone. Each function's entry (functions/) then builds only the store operations it calls from
 * these tables. The same code runs on AWS and locally; only these variables differ:
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
 *   listPets keeps one in the control table (lib/store/cursorSecret.ts).
 * - STATUS_INDEX_SHARDS: how many shards the status index's partition key has (default 2, the
 *   stages set theirs in infra/stages.ts); createPet writes and listPets reads with it.
 *
 * The AWS SDK's own variables (AWS_USE_FIPS_ENDPOINT, AWS_RETRY_MODE...) and shared config files
 * work as the SDK documents them. The Lambda bundles take their credentials from the environment
 * alone (infra/bundle/credentialProvider.ts).
 */
import { StaticApiKeys, type ApiKeyStore } from './domain/apiKeys.ts';
import type { Deadline } from './domain/deadline.ts';
import type { IdGenerator } from './domain/ids.ts';
import { ControlTableApiKeys } from './store/controlTableKeys.ts';
import { KeyUses } from './store/keyUses.ts';
import { STORE_BUDGET_MS } from './store/deadline.ts';
import { createDocumentClient, type StoreTable } from './store/dynamo.ts';
import {
  DEFAULT_CONTROL_TABLE,
  DEFAULT_STATUS_INDEX_SHARDS,
  MAX_STATUS_INDEX_SHARDS,
  STATUS_INDEX_SHARDS_VARIABLE,
  type PetsTable,
} from './store/table.ts';

/** What the operations' handlers run against: the tables, the keys, the clock and the settings. */
export interface Dependencies {
  /** The pets table, with its status index's shard count. */
  pets: PetsTable;
  /** The control table, through the pets table's own client. */
  control: StoreTable;
  keys: ApiKeyStore;
  now: () => Date;
  /** A cursor secret given in configuration (local use); when unset, the control table keeps one. */
  cursorSecret?: string | undefined;
  /** Each request's budget for store calls (lib/store/deadline.ts); STORE_BUDGET_MS, default 2,500. */
  storeBudgetMs?: number;
  /**
   * Where createPet draws pet ids (default: lib/domain/ids.ts's timeOrderedId). No configuration
   * sets it: tests compose a service with ids of few random bits to force collisions.
   */
  newId?: IdGenerator | undefined;
}

export type Environment = Record<string, string | undefined>;

export function dependenciesFromEnvironment(env: Environment = process.env): Dependencies {
  const control = controlTableFromEnvironment(env);
  const { documents } = control;
  return {
    pets: { documents, tableName: env.TABLE_NAME ?? 'pets', statusIndexShards: statusIndexShardsOf(env) },
    control,
    keys: keyStoreOf(env, control),
    now: () => new Date(),
    cursorSecret: env.PETSTORE_CURSOR_SECRET || undefined,
    storeBudgetMs: storeBudgetFromEnvironment(env),
  };
}

/** Each request's budget for store calls: STORE_BUDGET_MS, default lib/store/deadline.ts's. */
const storeBudgetFromEnvironment = (env: Environment): number => Number(env.STORE_BUDGET_MS) || STORE_BUDGET_MS;

/**
 * What the authorizer (functions/authorize.ts) needs: the key store alone (the control table's keys,
 * or PETSTORE_API_KEYS), without the pets table, which the authorizer's role cannot reach; where
 * each key's last use is recorded (the control table's keys only); and the store budget.
 */
export function authorizerFromEnvironment(env: Environment = process.env): AuthorizerDependencies {
  const control = controlTableFromEnvironment(env);
  const uses = env.PETSTORE_API_KEYS ? undefined : new KeyUses(control.documents, control.tableName);
  return {
    keys: keyStoreOf(env, control),
    storeBudgetMs: storeBudgetFromEnvironment(env),
    recordUse: uses && ((keyId: string, deadline: Deadline) => uses.record(keyId, deadline)),
  };
}

/** What the key authorizer runs against (`authorizerFromEnvironment`). */
export interface AuthorizerDependencies {
  keys: ApiKeyStore;
  storeBudgetMs: number;
  recordUse: ((keyId: string, deadline: Deadline) => Promise<void>) | undefined;
}

function controlTableFromEnvironment(env: Environment): StoreTable {
  const documents = createDocumentClient({
    region: env.AWS_REGION,
    endpoint: env.DYNAMODB_ENDPOINT,
    attemptTimeoutMs: Number(env.DYNAMODB_ATTEMPT_TIMEOUT_MS) || undefined,
  });
  return { documents, tableName: env.CONTROL_TABLE_NAME ?? DEFAULT_CONTROL_TABLE };
}

const keyStoreOf = (env: Environment, control: StoreTable): ApiKeyStore =>
  env.PETSTORE_API_KEYS ? StaticApiKeys.fromList(env.PETSTORE_API_KEYS) : new ControlTableApiKeys(control);

/** The configured shard count; a value that is not a power of two from 1 to the maximum stops the start. */
export function statusIndexShardsOf(env: Environment): number {
  const given = env[STATUS_INDEX_SHARDS_VARIABLE];
  if (given === undefined || given === '') return DEFAULT_STATUS_INDEX_SHARDS;
  const shards = /^\d+$/.test(given) ? Number(given) : NaN;
  // A power of two, so that `id mod N` reads only an id's random low bits (lib/store/table.ts).
  if (!(shards >= 1) || shards > MAX_STATUS_INDEX_SHARDS || (shards & (shards - 1)) !== 0) {
    throw new Error(
      `${STATUS_INDEX_SHARDS_VARIABLE} must be a power of two from 1 to ${MAX_STATUS_INDEX_SHARDS}, not '${given}'.`,
    );
  }
  return shards;
}

let shared: Dependencies | undefined;

/** One set of dependencies per process, shared by every handler module loaded in it. */
export function defaultDependencies(): Dependencies {
  shared ??= dependenciesFromEnvironment();
  return shared;
}
