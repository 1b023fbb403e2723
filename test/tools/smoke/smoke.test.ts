/**
 * `npm run smoke` against the local API (in memory): every check passes, the read-only mode creates
 * nothing, a wrong base is refused, and a failure says its cause.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { petStoreClient, PetStoreError } from '../../../client/src/index.ts';
import type { LocalApi } from '../../../local/server.ts';
import { SMOKE_KEY_VARIABLE, runSmoke } from '../../../tools/smoke/smoke.ts';
import { startTestApi } from '../../support/localApi.ts';
import { validatingFetch } from '../../support/http.ts';
import { freePort } from '../../support/ports.ts';

const KEY = 'smoke-test-key';
let api: LocalApi;
let client: ReturnType<typeof petStoreClient>;

beforeAll(async () => {
  api = await startTestApi(KEY);
  client = petStoreClient({ baseUrl: api.url, apiKey: KEY, fetch: validatingFetch });
});
afterAll(async () => {
  await api?.close();
});

async function storedPets() {
  const pets = [];
  for await (const pet of client.allPets({ limit: 100 })) pets.push(pet);
  return pets;
}

async function smoke(key: string, readOnly = false) {
  const lines: string[] = [];
  const result = await runSmoke(api.url, key, { readOnly, print: (line) => lines.push(line), fetch: validatingFetch });
  return { lines, result };
}

/** The smoke command in a child process; its environment has no API key unless `key` gives one. */
function cli(...args: string[]) {
  return cliWith({}, ...args);
}

function cliWith(env: Record<string, string>, ...args: string[]) {
  const { [SMOKE_KEY_VARIABLE]: _inherited, ...inherited } = process.env;
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/smoke.ts', ...args],
      { timeout: 60_000, env: { ...inherited, ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

describe('--read-only', () => {
  it('on an empty store, creates nothing and says which checks it had to skip', async () => {
    const { lines, result } = await smoke(KEY, true);
    expect(result).toEqual({ passed: 4, failed: 0, skipped: 2 });
    expect(lines.filter((line) => line.startsWith('skip'))).toEqual([
      'skip  Link rel="next" is an absolute URL of listPets: the store holds fewer than 2 pets, so there is no next page',
      'skip  getPet carries Deprecation, Sunset and its successor: the store holds no pets to read',
    ]);
    expect(lines.at(-1)).toBe(`smoke ${api.url} (read-only): 4 passed, 0 failed, 2 skipped`);
    expect(await storedPets()).toEqual([]);
  });

  it('on a store with pets, runs every check and creates nothing', async () => {
    for (let i = 0; i < 5; i++) await client.createPet({ name: `Stored ${i}`, categoryId: 3, status: 'sold' });
    const before = await storedPets();
    const { lines, result } = await smoke(KEY, true);
    expect(lines.filter((line) => !line.startsWith('ok'))).toEqual([
      `smoke ${api.url} (read-only): 6 passed, 0 failed`,
    ]);
    expect(result).toEqual({ passed: 6, failed: 0, skipped: 0 });
    expect(lines.find((line) => line.includes('pages through'))).toMatch(/: 5 pets over 3 pages, to the last page$/);
    expect(lines.find((line) => line.includes('absolute URL'))).toMatch(`: ${api.url}/pets`);
    expect(await storedPets()).toEqual(before);
  });
});

it('a creating run passes every check and prints the id of the pet it stored', async () => {
  // Enough pending pets that the smoke pet is found on a later page.
  for (let i = 0; i < 105; i++) await client.createPet({ name: `Filler ${i}`, categoryId: 2, status: 'pending' });
  const { lines, result } = await smoke(KEY);
  expect(lines.filter((line) => !line.startsWith('ok'))).toEqual([`smoke ${api.url}: 9 passed, 0 failed`]);
  expect(result).toMatchObject({ passed: 9, failed: 0, skipped: 0 });
  const smokePets = (await storedPets()).filter((pet) => pet.name.startsWith('smoke-test'));
  expect(smokePets.map((pet) => pet.id)).toEqual([result.createdId]);
  expect(lines[0]).toContain(`created pet ${result.createdId} ("smoke-test `);
  expect(lines.find((line) => line.includes('paging'))).toMatch(/among 106 pending pets/);
});

it('with a wrong key, says once that the key was refused and skips the checks that need it', async () => {
  const { lines, result } = await smoke('not-a-key');
  expect(lines.filter((line) => line.startsWith('FAIL'))).toEqual([
    'FAIL  createPet answers 201 with the pet and its Location: the API refused the key (401): check PETSTORE_API_KEY; the checks that need it are skipped',
  ]);
  expect(lines).toContain('ok    401 without a key');
  // Skipped for the refused key, said so: never read as an empty store's skip.
  const skips = lines.filter((line) => line.startsWith('skip'));
  expect(skips).toHaveLength(7);
  for (const line of skips) expect(line).toMatch(/^skip {2}.*: not run, the API refused the key$/);
  expect(result).toEqual({ passed: 1, failed: 1, skipped: 7 });
  expect(lines.at(-1)).toBe(`smoke ${api.url}: 1 passed, 1 failed, 7 skipped (the API refused the key)`);
});

it('read-only with a wrong key: the first keyed check fails for the key, the rest are skipped', async () => {
  const { lines, result } = await smoke('not-a-key', true);
  expect(lines.filter((line) => line.startsWith('FAIL'))).toEqual([
    expect.stringMatching(/^FAIL {2}404 for an unknown id: the API refused the key \(401\)/),
  ]);
  expect(result).toEqual({ passed: 1, failed: 1, skipped: 4 });
});

it('surfaces the Error body as a typed PetStoreError', async () => {
  const error = await client.getPet(Number.MAX_SAFE_INTEGER).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(PetStoreError);
  expect((error as PetStoreError).body).toEqual({ code: 'NOT_FOUND', message: expect.any(String), status: 404 });
});

describe('as npm run smoke', () => {
  it('answers a mistake in one line with exit code 2: no --base, a base that does not end in /v1', async () => {
    const usage = await cli();
    expect(usage).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'smoke: --base is required (npm run smoke -- --help for usage)\n',
    });
    const base = api.url.replace(/\/v1$/, '');
    const wrongBase = await cliWith({ [SMOKE_KEY_VARIABLE]: KEY }, '--base', base);
    expect(wrongBase).toMatchObject({ code: 2, stdout: '' });
    expect(wrongBase.stderr).toMatch(
      new RegExp(
        `^smoke: --base must end in /v1, the stage's base URL .*, not ${base} \\(npm run smoke -- --help for usage\\)\n$`,
      ),
    );
    const help = await cli('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: PETSTORE_API_KEY=<API key> npm run smoke -- --base/);
  });

  it(`refuses --key in one line, pointing at ${SMOKE_KEY_VARIABLE}, before any request; no message suggests --key`, async () => {
    let requests = 0;
    const counting = createServer((_request, response) => {
      requests++;
      response.end();
    });
    await new Promise<void>((listening) => counting.listen(0, '127.0.0.1', listening));
    try {
      const base = `http://127.0.0.1:${(counting.address() as AddressInfo).port}/v1`;
      for (const args of [
        ['--base', base, '--key', KEY],
        [`--key=${KEY}`, '--base', base],
      ]) {
        const refused = await cliWith({ [SMOKE_KEY_VARIABLE]: KEY }, ...args);
        expect(refused).toMatchObject({
          code: 2,
          stdout: '',
          stderr: `smoke: --key is refused: a key on the command line lands in shell history and ps; set ${SMOKE_KEY_VARIABLE} instead (npm run smoke -- --help for usage)\n`,
        });
      }
      expect(requests).toBe(0);
    } finally {
      await new Promise((closed) => counting.close(closed));
    }
    const said = [await cli(), await cli('--help'), await cli('--base', api.url)]
      .map((run) => run.stdout + run.stderr)
      .join('\n');
    expect(said).not.toContain('--key');
  });

  it('says why a request failed: the connection was refused, and where', async () => {
    const port = await freePort();
    const run = await cliWith(
      { [SMOKE_KEY_VARIABLE]: KEY },
      '--base',
      `http://127.0.0.1:${port}/v1`,
      '--read-only',
      '--retry-budget',
      '300',
    );
    expect(run.code).toBe(1);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(
      new RegExp(`^FAIL  401 without a key: fetch failed: ECONNREFUSED 127\\.0\\.0\\.1:${port} \\(\\d+ attempts? in `),
    );
    expect(
      lines
        .slice(1, -1)
        .every((line) =>
          line.includes(`not run, the API did not answer (fetch failed: ECONNREFUSED 127.0.0.1:${port}`),
        ),
    ).toBe(true);
    expect(lines.at(-1)).toMatch(/: 0 passed, 6 failed$/);
  });

  it(`reads the key from ${SMOKE_KEY_VARIABLE}; without it says so in one line and exits 2`, async () => {
    const fromEnvironment = await cliWith({ [SMOKE_KEY_VARIABLE]: KEY }, '--base', api.url, '--read-only');
    expect(fromEnvironment.code).toBe(0);
    expect(fromEnvironment.stdout).toMatch(/ok {4}404 for an unknown id/);
    const keyless = await cli('--base', api.url, '--read-only');
    expect(keyless).toMatchObject({
      code: 2,
      stdout: '',
      stderr: `smoke: no API key: set ${SMOKE_KEY_VARIABLE} (npm run smoke -- --help for usage)\n`,
    });
  });

  it('exits 0 on a passing creating run, printing the pet it made, and 1 on failure', async () => {
    const passing = await cliWith({ [SMOKE_KEY_VARIABLE]: KEY }, '--base', api.url);
    expect(passing.code).toBe(0);
    const id = Number(/created pet (\d+)/.exec(passing.stdout)?.[1]);
    expect((await client.getPet(id)).pet.name).toMatch(/^smoke-test /);
    const failing = await cliWith({ [SMOKE_KEY_VARIABLE]: 'not-a-key' }, '--base', api.url);
    expect(failing.code).toBe(1);
    expect(failing.stdout).toMatch(/1 failed, 7 skipped \(the API refused the key\)\n$/);
  });
});
