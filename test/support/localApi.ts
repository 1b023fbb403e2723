/** The local API for HTTP tests: in memory, on a free port, quiet, accepting one test key. */
import { startLocalApi, type LocalApi, type LocalApiOptions } from '../../local/server.ts';

export async function startTestApi(key: string, env: Record<string, string> = {}, options: LocalApiOptions = {}): Promise<LocalApi> {
  Object.assign(process.env, { PETSTORE_API_KEYS: key, PETSTORE_IN_MEMORY: '1', ...env });
  delete process.env.DYNAMODB_ENDPOINT;
  return startLocalApi({ port: 0, quiet: true, ...options });
}
