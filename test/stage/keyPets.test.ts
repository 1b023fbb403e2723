/**
 * `npm run keys -- pets` against the production stage run as deployed, as an operator runs it
 * offline (`--pets-table` and `--endpoint`, which `npm run start:deployed` prints): two keys create
 * pets through the API; the command lists the first key's, and with `--remove` removes exactly
 * those; the second key's remain, as the listing and getPet confirm.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PETS_TABLE_OUTPUT } from '../../infra/names.ts';
import { API_KEY_FORMAT } from '../../tools/keys/keys.ts';
import { issueKey, startStage, type RunningStage } from '../support/deployedStage.ts';
import { fetchApi } from '../support/http.ts';
import { runKeysCollected } from '../support/keys.ts';

const STAGE = 'production';
let running: RunningStage;
let first: string;
let second: string;

const keyIdOf = (key: string) => API_KEY_FORMAT.exec(key)![1]!;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

beforeAll(async () => {
  running = await startStage(STAGE);
  first = running.key;
  second = await issueKey(STAGE, running.api);
}, 240_000);
afterAll(() => running?.close());

async function create(key: string, name: string, idempotencyKey?: string): Promise<number> {
  const headers = {
    ...auth(key),
    'Content-Type': 'application/json',
    ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}),
  };
  const body = JSON.stringify({ name, categoryId: 1, status: 'available' });
  const answer = await fetchApi(`${running.api.url}/pets`, { method: 'POST', headers, body });
  expect(answer.status).toBe(201);
  return answer.body.id;
}

/** `npm run keys -- pets <keyId> ...` as an operator runs it against the stage offline. */
const keysPets = (keyId: string, ...options: string[]) =>
  runKeysCollected(
    [
      'pets',
      keyId,
      '--stage',
      STAGE,
      '--pets-table',
      running.api.output(PETS_TABLE_OUTPUT),
      '--endpoint',
      running.api.storeEndpoint,
      ...options,
    ],
    { env: { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'operator', AWS_SECRET_ACCESS_KEY: 'operator' } },
  );

describe('keys pets on the production stage run as deployed', () => {
  it("removes exactly the first key's pets; the second key's remain", async () => {
    const firsts = [await create(first, 'Rex'), await create(first, 'Tom', 'order-1')];
    const seconds = [await create(second, 'Bella'), await create(second, 'Luna', 'order-1')];

    const dryRun = await keysPets(keyIdOf(first));
    expect(dryRun).toMatchObject({ code: 0, err: '' });
    expect(dryRun.out).toContain('2 pets. Nothing removed (dry run)');
    for (const id of firsts) expect(dryRun.out).toContain(String(id));
    for (const id of seconds) expect(dryRun.out).not.toContain(String(id));

    const removal = await keysPets(keyIdOf(first), '--remove', '--yes');
    expect(removal).toMatchObject({ code: 0, err: '' });
    expect(removal.out.split('\n').at(-1)).toBe(`Removed 2 pets created by key ${keyIdOf(first)}.`);

    const listed = await fetchApi(`${running.api.url}/pets?status=available&limit=100`, { headers: auth(second) });
    expect(listed.body.map((pet: { id: number }) => pet.id)).toEqual([...seconds].sort((a, b) => a - b));
    for (const id of firsts)
      expect((await fetchApi(`${running.api.url}/pets/${id}`, { headers: auth(second) })).status).toBe(404);
    for (const id of seconds)
      expect((await fetchApi(`${running.api.url}/pets/${id}`, { headers: auth(first) })).status).toBe(200);

    // The first key's replay of a removed pet's create: 410, and nothing written again.
    const replay = await fetchApi(`${running.api.url}/pets`, {
      method: 'POST',
      headers: { ...auth(first), 'Content-Type': 'application/json', 'Idempotency-Key': 'order-1' },
      body: JSON.stringify({ name: 'Tom', categoryId: 1, status: 'available' }),
    });
    expect(replay.body).toMatchObject({ code: 'GONE', status: 410 });
    expect((await keysPets(keyIdOf(first))).out).toMatch(/^No pets created by key/);
    expect((await keysPets(keyIdOf(second))).out).toContain('2 pets. Nothing removed (dry run)');
  });
});
