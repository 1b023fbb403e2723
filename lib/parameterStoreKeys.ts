/**
 * The deployed API-key store: one SecureString parameter per key under `/petstore/<stage>/api-keys`,
 * named by the key's id, holding `{"sha256":"<hex digest of the key>","createdAt":"<ISO date>"}`.
 * The plaintext key is never stored. Digests are cached for a few minutes, so a key issued or revoked
 * with `npm run keys` takes effect within `ttlMs` without a redeploy.
 */
import { GetParametersByPathCommand, SSMClient, type Parameter } from '@aws-sdk/client-ssm';
import type { ApiKeyStore } from './auth.ts';
import { boundedClientConfig, endpointConfig } from './awsClients.ts';
import { refreshing } from './cache.ts';
import { warn } from './log.ts';

export const DEFAULT_KEYS_TTL_MS = 5 * 60_000;

export const STAGES = ['staging', 'production'] as const;
export type Stage = (typeof STAGES)[number];

export const isStage = (value: string): value is Stage => (STAGES as readonly string[]).includes(value);

/** Where a stage's keys live. */
export const apiKeysPath = (stage: Stage): string => `/petstore/${stage}/api-keys`;

/** What a key's parameter holds. */
export interface ApiKeyRecord {
  /** Hex SHA-256 digest of the key (written lowercase). */
  sha256: string;
  /** ISO 8601 instant the key was created. */
  createdAt: string;
}

export const formatKeyRecord = ({ sha256, createdAt }: ApiKeyRecord): string => JSON.stringify({ sha256, createdAt });

const SHA256_HEX = /^[0-9a-f]{64}$/i;

/** The record a parameter value holds, or undefined when it is not one. */
export function parseKeyRecord(value: string | undefined): ApiKeyRecord | undefined {
  if (value === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const { sha256, createdAt } = parsed as Record<string, unknown>;
  if (typeof sha256 !== 'string' || !SHA256_HEX.test(sha256)) return undefined;
  if (typeof createdAt !== 'string' || Number.isNaN(Date.parse(createdAt))) return undefined;
  return { sha256, createdAt };
}

export function createSsmClient({ endpoint }: { endpoint?: string | undefined } = {}): SSMClient {
  return new SSMClient({ ...boundedClientConfig, ...endpointConfig(endpoint) });
}

/** Every parameter directly under `path` (not recursively), decrypted, following NextToken to the end. */
export async function readKeyParameters(client: SSMClient, path: string): Promise<Parameter[]> {
  const parameters: Parameter[] = [];
  let nextToken: string | undefined;
  do {
    const page = await client.send(
      new GetParametersByPathCommand({ Path: path, Recursive: false, WithDecryption: true, NextToken: nextToken }),
    );
    parameters.push(...(page.Parameters ?? []));
    nextToken = page.NextToken;
  } while (nextToken);
  return parameters;
}

/** `/a/b/` and `/a/b` name the same path; a path must be absolute. */
export function normalizePath(path: string): string {
  const trimmed = path.trim().replace(/\/+$/, '');
  if (!trimmed.startsWith('/')) throw new Error(`A parameter path must start with "/", got "${path}".`);
  return trimmed;
}

export interface ParameterStoreApiKeysOptions {
  /** For example `apiKeysPath('production')`. */
  path: string;
  /** Made on first use when not given, with the default credentials and region. */
  client?: SSMClient;
  ttlMs?: number;
  now?: () => number;
}

export class ParameterStoreApiKeys implements ApiKeyStore {
  readonly path: string;
  #client: SSMClient | undefined;
  readonly #digests: () => Promise<readonly Buffer[]>;

  constructor({ path, client, ttlMs = DEFAULT_KEYS_TTL_MS, now = Date.now }: ParameterStoreApiKeysOptions) {
    this.path = normalizePath(path);
    this.#client = client;
    this.#digests = refreshing({ name: `the API keys under ${this.path}`, load: () => this.#load(), ttlMs, now });
  }

  keyDigests(): Promise<readonly Buffer[]> {
    return this.#digests();
  }

  async #load(): Promise<readonly Buffer[]> {
    this.#client ??= createSsmClient();
    const digests: Buffer[] = [];
    for (const parameter of await readKeyParameters(this.#client, this.path)) {
      const record = parseKeyRecord(parameter.Value);
      // Name only: the value is not logged, even when malformed.
      if (record) digests.push(Buffer.from(record.sha256, 'hex'));
      else warn(`Ignoring parameter ${parameter.Name ?? '(unnamed)'}: its value is not {"sha256":"<hex>","createdAt":"<ISO date>"}.`);
    }
    if (digests.length === 0) warn(`No API keys found under ${this.path}: every request will be answered 401.`);
    return Object.freeze(digests);
  }
}
