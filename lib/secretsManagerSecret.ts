/**
 * The cursor-signing secret when deployed: a Secrets Manager secret's SecretString, read on first use
 * and kept for `ttlMs`, so a rotated secret is picked up without a redeploy.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { boundedClientConfig, endpointConfig } from './awsClients.ts';
import { refreshing } from './cache.ts';
import type { SecretSource } from './pagination.ts';

export const DEFAULT_SECRET_TTL_MS = 15 * 60_000;

export interface SecretsManagerSecretOptions {
  /** The secret's name or ARN. */
  secretId: string;
  /** Made on first use when not given, with the default credentials and region. */
  client?: SecretsManagerClient;
  ttlMs?: number;
  now?: () => number;
}

export function createSecretsManagerClient({ endpoint }: { endpoint?: string | undefined } = {}): SecretsManagerClient {
  return new SecretsManagerClient({ ...boundedClientConfig, ...endpointConfig(endpoint) });
}

export function secretsManagerSecret({
  secretId,
  client,
  ttlMs = DEFAULT_SECRET_TTL_MS,
  now = Date.now,
}: SecretsManagerSecretOptions): SecretSource {
  let secrets = client;
  return refreshing({
    name: `secret ${secretId}`,
    ttlMs,
    now,
    load: async () => {
      secrets ??= createSecretsManagerClient();
      const { SecretString } = await secrets.send(new GetSecretValueCommand({ SecretId: secretId }));
      if (!SecretString) throw new Error(`Secret ${secretId} has no SecretString (a binary or empty secret cannot sign cursors).`);
      return SecretString;
    },
  });
}
