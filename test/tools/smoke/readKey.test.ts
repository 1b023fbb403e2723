/**
 * The production smoke check's key is a read key (docs/deploying.md): `npm run smoke --read-only`
 * passes with one, against the local API given `read:<key>` (lib/domain/keyScope.ts), which refuses
 * that key's createPet 403 in the Error shape, as a deployed stage does; the full smoke fails with it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { petStoreClient, PetStoreError } from '../../../client/src/index.ts';
import { SCOPE_REFUSED_MESSAGE } from '../../../lib/domain/keyScope.ts';
import type { LocalApi } from '../../../local/server.ts';
import { runSmoke } from '../../../tools/smoke/smoke.ts';
import { validatingFetch } from '../../support/http.ts';
import { startTestApi } from '../../support/localApi.ts';

const WRITER = 'smoke-writer-key';
const READER = 'smoke-reader-key';
let api: LocalApi;

beforeAll(async () => {
  api = await startTestApi(`${WRITER},read:${READER}`);
  const writer = petStoreClient({ baseUrl: api.url, apiKey: WRITER, fetch: validatingFetch });
  for (let n = 0; n < 3; n++) await writer.createPet({ name: `Stored ${n}`, categoryId: 1, status: 'sold' });
});
afterAll(() => api?.close());

const smoke = (readOnly: boolean) => runSmoke(api.url, READER, { readOnly, print: () => {}, fetch: validatingFetch });

it('passes read-only with a read key, which the API refuses 403 on createPet', async () => {
  expect(await smoke(true)).toEqual({ passed: 6, failed: 0, skipped: 0 });
  const reader = petStoreClient({ baseUrl: api.url, apiKey: READER, fetch: validatingFetch });
  const refused = await reader.createPet({ name: 'Nope', categoryId: 1 }).catch((error: unknown) => error);
  expect(refused).toBeInstanceOf(PetStoreError);
  expect((refused as PetStoreError).status).toBe(403);
  expect((refused as PetStoreError).body).toEqual({ code: 'FORBIDDEN', message: SCOPE_REFUSED_MESSAGE, status: 403 });
  expect((await smoke(false)).failed).toBeGreaterThan(0);
});
