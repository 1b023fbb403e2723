/**
 * Key scopes and daily create ceilings on the production stage run as deployed (lib/domain/keyScope.ts):
 * a read key, issued with `keys create --scope read`, reads but is refused 403 on POST by API
 * Gateway on the authorizer's policy, whichever method its cached Allow was made for, before
 * createPet runs; a write key issued with a low `--creates-per-day` is answered 429 past it by
 * createPet, whose role may count creates and nothing more (the emulator enforces it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPE_REFUSED_MESSAGE } from '../../lib/domain/keyScope.ts';
import type { DeployedFunction } from '../../tools/stage-emulator/src/deployedApi.ts';
import { fetchApi } from '../support/http.ts';
import { issueKey, startStage, type RunningStage } from '../support/deployedStage.ts';

const STAGE = 'production';
let running: RunningStage;
let reader: string;
let limited: string;

const fn = (name: RegExp): DeployedFunction => running.api.functions.find((f) => name.test(f.logicalId))!;
const createPetRuns = () => fn(/^CreatePetFunction/).host.invocations;
const post = (key: string, name: string) =>
  fetchApi(`${running.api.url}/pets`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name, categoryId: 1, status: 'available' }),
  });
const get = (key: string) =>
  fetchApi(`${running.api.url}/pets?limit=1`, { headers: { Authorization: `Bearer ${key}` } });

beforeAll(async () => {
  running = await startStage(STAGE);
  // Issued before any request: the authorizer keeps the keys it read for minutes.
  reader = await issueKey(STAGE, running.api, { options: ['--scope', 'read'] });
  limited = await issueKey(STAGE, running.api, { options: ['--creates-per-day', '2'] });
}, 240_000);
afterAll(() => running?.close());

describe('key scopes and daily create ceilings on the production stage run as deployed', () => {
  it('refuses a read key on POST with 403 FORBIDDEN in the Error shape before createPet runs, and lets it read, whichever method asked first', async () => {
    const before = createPetRuns();
    // POST first: the Allow API Gateway caches for this key then serves the GET after it too.
    const refused = await post(reader, 'Nope');
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ code: 'FORBIDDEN', message: SCOPE_REFUSED_MESSAGE, status: 403 });
    expect((await get(reader)).status).toBe(200);
    expect((await post(reader, 'Nope again')).status).toBe(403);
    expect(createPetRuns()).toBe(before);
    // The stage's own write key still creates.
    expect((await post(running.key, 'Yes')).status).toBe(201);
  });

  it('answers 429 TOO_MANY_REQUESTS with Retry-After until 00:00 UTC once a key has created its pets of the day', async () => {
    expect((await post(limited, 'one')).status).toBe(201);
    expect((await post(limited, 'two')).status).toBe(201);
    const refused = await post(limited, 'three');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      code: 'TOO_MANY_REQUESTS',
      message: 'This API key has created its 2 pets for today (UTC); it may create more from 00:00 UTC.',
      status: 429,
    });
    const untilMidnight = Math.ceil((Date.UTC(...utcToday(), 24) - Date.now()) / 1000);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(untilMidnight + 1);
    // Another key counts apart.
    expect((await post(running.key, 'other key')).status).toBe(201);
  });
});

/** Today's UTC year, month and day, for Date.UTC. */
function utcToday(): [number, number, number] {
  const now = new Date();
  return [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()];
}
