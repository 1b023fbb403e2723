/**
 * A fixture of test/infra/lambdaSdkConfig.test.ts, run in a child process as a Lambda bundle and
 * as source: prints, as one JSON line, the settings the functions' DynamoDB client resolves from
 * its environment (and, where the SDK reads them, the shared config files).
 */
import { createDynamoClient } from '../../lib/store/dynamo.ts';

const PROBED_SETTINGS = [
  'useFipsEndpoint',
  'useDualstackEndpoint',
  'retryMode',
  'accountIdEndpointMode',
  'userAgentAppId',
  'authSchemePreference',
  'defaultsMode',
  'endpointDiscoveryEnabled',
] as const;

const { config } = createDynamoClient({ region: 'us-east-1' });
const settings: Record<string, unknown> = {};
for (const name of PROBED_SETTINGS) {
  const value: unknown = (config as unknown as Record<string, unknown>)[name];
  // null, not undefined, so that a setting resolved to nothing still shows in the JSON.
  settings[name] = (typeof value === 'function' ? await (value as () => Promise<unknown>)() : value) ?? null;
}
process.stdout.write(`${JSON.stringify(settings)}\n`);
