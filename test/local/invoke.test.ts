/** `npm run invoke` as a user runs it: one process per invocation, on the sample events. */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { invoke } from '../../local/invoke.ts';

const run = promisify(execFile);
// A persistent store in a temp folder, kept between invocations as `.data/` is.
const dataDir = mkdtempSync(join(tmpdir(), 'petstore-invoke-'));

async function invokeCli(...args: string[]) {
  const env: Record<string, string | undefined> = { ...process.env, PETSTORE_DATA_DIR: dataDir };
  for (const name of ['PETSTORE_API_KEYS', 'PETSTORE_IN_MEMORY', 'DYNAMODB_ENDPOINT']) delete env[name];
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'local/invoke.ts', ...args], { env });
  return JSON.parse(stdout) as { statusCode: number; headers: Record<string, string>; body: string };
}

it('runs each sample event against the local store, which keeps its data between runs', async () => {
  const created = await invokeCli('createPet', '--event', 'events/createPet.json');
  expect(created.statusCode).toBe(201);
  const pet = JSON.parse(created.body);

  const listed = await invokeCli('listPets', '--event', 'events/listPets.json');
  expect(listed.statusCode).toBe(200);
  expect(JSON.parse(listed.body)).toContainEqual(pet);

  const fetched = await invokeCli('getPet', '--event', 'events/getPet.json', '--path', `petId=${pet.id}`);
  expect(fetched.statusCode).toBe(200);
  expect(JSON.parse(fetched.body)).toEqual(pet);
  expect(fetched.headers.Sunset).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
});

it('refuses an unknown operation or a missing event with its usage', async () => {
  await expect(invoke(['deletePet', '--event', 'events/getPet.json'])).rejects.toThrow(/Usage/);
  await expect(invoke(['listPets'])).rejects.toThrow(/Usage/);
});
