/** The local API for HTTP tests: in memory, on a free port, quiet, accepting one test key. */
import { afterAll, beforeAll } from 'vitest';
import { startLocalApi, type LocalApi, type LocalApiOptions } from '../../local/server.ts';

export async function startTestApi(
  key: string,
  env: Record<string, string> = {},
  options: LocalApiOptions = {},
): Promise<LocalApi> {
  Object.assign(process.env, { PETSTORE_API_KEYS: key, PETSTORE_IN_MEMORY: '1', ...env });
  delete process.env.DYNAMODB_ENDPOINT;
  return startLocalApi({ port: 0, quiet: true, ...options });
}

/** The file's one local API, started before its tests and closed after: `api` and its `port` once started. */
export function useTestApi(key: string): { api: LocalApi; port: number } {
  const running = {} as { api: LocalApi; port: number };
  beforeAll(async () => {
    running.api = await startTestApi(key);
    running.port = Number(new URL(running.api.url).port);
  });
  afterAll(async () => {
    await running.api?.close();
  });
  return running;
}
