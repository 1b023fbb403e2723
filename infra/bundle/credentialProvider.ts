/**
 * The Lambda bundles' stand-in for `@aws-sdk/credential-provider-node` (esbuild aliases that
 * package to this file: `lambdaAliases` in infra/bundle/bundling.ts). On Lambda the credentials are always
 * in the environment, so the SDK's default chain (SSO, INI, process, web identity, HTTP, IMDS, and
 * the STS and SSO clients behind them, about 135 kB of a 342 kB bundle) never runs there; this
 * reads the environment only. Bundled code: keep it small, with no dependency beyond the SDK's own
 * environment provider. `npm start`, `npm run invoke`, the scripts and the tests run the sources
 * and keep the full chain.
 */
import { ENV_KEY, ENV_SECRET, fromEnv, type FromEnvInit } from '@aws-sdk/credential-provider-env';

type CredentialProvider = ReturnType<typeof fromEnv>;

export const NO_ENVIRONMENT_CREDENTIALS =
  `No AWS credentials in the environment (${ENV_KEY}, ${ENV_SECRET}): ` +
  'this bundle reads credentials only from the environment, as on AWS Lambda.';

/** Named as the SDK names this failure, so a search of the logs for it finds both. */
class CredentialsProviderError extends Error {
  override readonly name = 'CredentialsProviderError';
  /** What SDK provider chains read: there is no other provider to try. */
  readonly tryNextLink = false;
}

/**
 * What the SDK clients call for their credentials when given none. Credentials found are kept
 * (Lambda's do not change during a sandbox's life, and the default chain keeps them too); a
 * failure is not, so every call that finds none says so.
 */
export function defaultProvider(init: FromEnvInit = {}): CredentialProvider {
  const fromEnvironment = fromEnv(init);
  let found: ReturnType<CredentialProvider> | undefined;
  return () => {
    if (found) return found;
    if (!process.env[ENV_KEY] || !process.env[ENV_SECRET]) {
      return Promise.reject(new CredentialsProviderError(NO_ENVIRONMENT_CREDENTIALS));
    }
    found = fromEnvironment();
    return found;
  };
}
