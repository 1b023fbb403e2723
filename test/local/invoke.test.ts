/** `npm run invoke` as a user runs it: one process per invocation, on the sample events. */
import { execFile, spawnSync } from 'node:child_process';
import { commandEnvironment, expectOneLineRefusal, runCli } from '../support/cli.ts';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { nextLink, petStoreClient, type Pet } from '../../client/src/index.ts';
import { PROJECT_ROOT } from '../../infra/bundle/bundling.ts';
import { routes } from '../../lib/domain/routes.ts';
import { invoke } from '../../local/invoke.ts';
import type { LocalApi } from '../../local/server.ts';
import { fetchApi, validatingFetch } from '../support/http.ts';
import { startTestApi } from '../support/localApi.ts';

const run = promisify(execFile);
// A persistent store in a temp folder, kept between invocations as `.data/` is.
const dataDir = mkdtempSync(join(tmpdir(), 'petstore-invoke-'));

interface LambdaResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

async function invokeCli(args: string[], extraEnv: Record<string, string> = {}): Promise<LambdaResult> {
  const env: Record<string, string | undefined> = { ...process.env, PETSTORE_DATA_DIR: dataDir };
  for (const name of ['PETSTORE_API_KEYS', 'PETSTORE_IN_MEMORY', 'DYNAMODB_ENDPOINT', 'PORT']) delete env[name];
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/invoke.ts', ...args], {
    env: { ...env, ...extraEnv },
  });
  return JSON.parse(stdout) as LambdaResult;
}

it('runs each sample event against the local store, which keeps its data between runs', async () => {
  const created = await invokeCli(['createPet', '--event', 'events/createPet.json']);
  expect(created.statusCode).toBe(201);
  const pet = JSON.parse(created.body);

  const listed = await invokeCli(['listPets', '--event', 'events/listPets.json']);
  expect(listed.statusCode).toBe(200);
  expect(JSON.parse(listed.body)).toContainEqual(pet);

  const fetched = await invokeCli(['getPet', '--event', 'events/getPet.json', '--path', `petId=${pet.id}`]);
  expect(fetched.statusCode).toBe(200);
  expect(JSON.parse(fetched.body)).toEqual(pet);
  expect(fetched.headers.Sunset).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
});

it('names an unknown function and the functions there are in one line, exit 2; a missing event gets the usage', async () => {
  const refused = await runCli('scripts/invoke.ts', ['creatPet', '--event', 'events/createPet.json'], {
    PETSTORE_IN_MEMORY: '1',
  });
  expectOneLineRefusal(
    refused,
    `unknown function creatPet; the functions are ${routes.map((route) => route.operation).join(', ')}.`,
  );
  expect(refused).toMatchObject({ code: 2, stdout: '' });
  await expect(invoke(['listPets'])).rejects.toThrow(/Usage/);
});

it('reads --event from the folder the command was typed in (npm runs it from the package folder)', async () => {
  const typed = spawnSync('npm', ['run', '-s', 'invoke', '--', 'listPets', '--event', 'listPets.json'], {
    cwd: join(PROJECT_ROOT, 'events'),
    encoding: 'utf8',
    env: commandEnvironment({ PETSTORE_IN_MEMORY: '1' }),
    timeout: 60_000,
  });
  expect(typed.status, typed.stderr).toBe(0);
  expect((JSON.parse(typed.stdout) as LambdaResult).statusCode).toBe(200);
});

it('refuses a cursor secret under 16 bytes in one line, exit 1, as npm start does', async () => {
  const refused = await runCli('scripts/invoke.ts', ['listPets', '--event', 'events/listPets.json'], {
    PETSTORE_IN_MEMORY: '1',
    PETSTORE_CURSOR_SECRET: 'abc',
  });
  expectOneLineRefusal(refused, /^PETSTORE_CURSOR_SECRET is 3 bytes: give one of at least 16/);
  expect(refused).toMatchObject({ code: 1, stdout: '' });
});

describe('the Link of a page is absolute under invoke, and the typed client follows it', () => {
  const KEY = 'invoke-link-test-key';
  const CURSOR_SECRET = 'invoke-link-test-cursor-secret';
  let api: LocalApi;
  let client: ReturnType<typeof petStoreClient>;
  let stored: Pet[];

  /** invoke on the local API's own store, with its cursor secret, as when both run on `.data/`. */
  const invokeOnApiStore = (args: string[], env: Record<string, string> = {}) =>
    invokeCli(args, { DYNAMODB_ENDPOINT: api.local.store.endpoint, PETSTORE_CURSOR_SECRET: CURSOR_SECRET, ...env });

  afterAll(async () => {
    await api?.close();
  });

  it('the sample event names the local API, and the client takes the next page from there', async () => {
    api = await startTestApi(KEY, { PETSTORE_CURSOR_SECRET: CURSOR_SECRET });
    client = petStoreClient({ baseUrl: api.url, apiKey: KEY, fetch: validatingFetch });
    stored = [];
    // More available pets than the sample event's limit (20).
    for (let i = 0; i < 25; i++)
      stored.push((await client.createPet({ name: `Listed ${i}`, categoryId: 1, status: 'available' })).pet);

    const first = await invokeOnApiStore(['listPets', '--event', 'events/listPets.json']);
    expect(first.statusCode).toBe(200);
    const next = nextLink(first.headers.Link ?? null) as string;
    const url = new URL(next); // throws on a relative link
    expect(url.origin + url.pathname).toBe('http://127.0.0.1:3000/v1/pets');
    expect(url.searchParams.get('limit')).toBe('20');
    expect(url.searchParams.get('status')).toBe('available');

    const rest = await client.followNext(next);
    expect(rest.next).toBeUndefined();
    const ids = [...JSON.parse(first.body), ...rest.pets].map((pet: Pet) => pet.id);
    expect(ids).toEqual(stored.map((pet) => pet.id).sort((a, b) => a - b));
  });

  it('an event without a domainName is given the local API address (PORT), and the link works there as it is', async () => {
    const event = JSON.parse(readFileSync('events/listPets.json', 'utf8'));
    delete event.requestContext.domainName;
    const file = join(dataDir, 'listPets-without-domain.json');
    writeFileSync(file, JSON.stringify(event));

    const first = await invokeOnApiStore(['listPets', '--event', file], { PORT: new URL(api.url).port });
    const next = nextLink(first.headers.Link ?? null) as string;
    expect(new URL(next).origin).toBe(new URL(api.url).origin);
    const rest = await fetchApi(next, { headers: { Authorization: `Bearer ${KEY}` } });
    expect(rest.status).toBe(200);
    expect([...JSON.parse(first.body), ...rest.body].map((pet: Pet) => pet.id)).toEqual(
      stored.map((pet) => pet.id).sort((a, b) => a - b),
    );
  });
});
