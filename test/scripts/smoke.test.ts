/** `npm run smoke` against the local API (in memory): every check passes, and failures are told and counted. */
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { petStoreClient, PetStoreError } from '../../client/src/index.ts';
import type { LocalApi } from '../../local/server.ts';
import { startTestApi } from '../support/localApi.ts';
import { runSmoke } from '../../scripts/smoke.ts';
import { validatingFetch } from '../support/http.ts';

const KEY = 'smoke-test-key';
let api: LocalApi;

beforeAll(async () => {
  api = await startTestApi(KEY);
});
afterAll(async () => {
  await api?.close();
});

it('passes every check against the local API', async () => {
  const client = petStoreClient({ baseUrl: api.url, apiKey: KEY, fetch: validatingFetch });
  // Enough pending pets that the smoke pet is found on a later page.
  for (let i = 0; i < 105; i++) await client.createPet({ name: `Filler ${i}`, categoryId: 2, status: 'pending' });
  const lines: string[] = [];
  const result = await runSmoke(api.url, KEY, (line) => lines.push(line), validatingFetch);
  expect(lines.filter((line) => !line.startsWith('ok'))).toEqual([`smoke ${api.url}: 7 passed, 0 failed`]);
  expect(result).toEqual({ passed: 7, failed: 0 });
  expect(lines.find((line) => line.includes('paging'))).toMatch(/among 10[6-9] pending pets/);
});

it('counts and prints failures with a wrong key', async () => {
  const lines: string[] = [];
  const result = await runSmoke(api.url, 'not-a-key', (line) => lines.push(line), validatingFetch);
  expect(result.failed).toBeGreaterThan(0);
  expect(lines.some((line) => line.startsWith('FAIL  createPet answers 201'))).toBe(true);
  expect(lines.at(-1)).toMatch(/: \d passed, [1-9] failed$/);
});

it('surfaces the Error body as a typed PetStoreError', async () => {
  const client = petStoreClient({ baseUrl: api.url, apiKey: KEY, fetch: validatingFetch });
  const error = await client.getPet(Number.MAX_SAFE_INTEGER).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(PetStoreError);
  expect((error as PetStoreError).body).toEqual({ code: 'NOT_FOUND', message: expect.any(String), status: 404 });
});

it('runs as npm run smoke, exiting non-zero on failure and printing its usage without arguments', async () => {
  const run = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'scripts/smoke.ts', ...args], { timeout: 60_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
      );
    });
  const usage = await run([]);
  expect(usage.code).toBe(2);
  expect(usage.stderr).toMatch(/^Usage: npm run smoke/);
  const failing = await run(['--base', api.url, '--key', 'not-a-key']);
  expect(failing.code).toBe(1);
  expect(failing.stdout).toMatch(/failed\n$/);
});
