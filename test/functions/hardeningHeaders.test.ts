/**
 * Every answer of every function carries `Cache-Control: no-store` and `X-Content-Type-Options:
 * nosniff` (lib/http/responses.ts HARDENING_HEADERS): successes, refusals and failures alike, on
 * dynalite. (test/support/events.ts `call` checks them on every handler answer of the suite too.)
 */
import { ThrottlingException } from '@aws-sdk/client-dynamodb';
import { beforeAll, expect, it, vi } from 'vitest';
import { createHandler as createPetHandler } from '../../functions/createPet.ts';
import { createHandler as getPetHandler } from '../../functions/getPet.ts';
import { createHandler as listPetsHandler } from '../../functions/listPets.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { dependenciesFromEnvironment, type Dependencies, type Environment } from '../../lib/service.ts';
import { localContext } from '@petstore/local-kit/proxyEvent';
import { apiEvent } from '../support/events.ts';
import { freshEnvironment, useEmbeddedStore } from '../support/store.ts';

const endpoint = useEmbeddedStore();
let env: Environment;
let service: Dependencies;
beforeAll(async () => {
  env = await freshEnvironment(endpoint());
  service = dependenciesFromEnvironment(env);
});

/** A service whose DynamoDB client fails every call: the one place a client is mocked. */
function failingService(): Dependencies {
  const documents = createDocumentClient({ endpoint: env.DYNAMODB_ENDPOINT });
  vi.spyOn(documents, 'send').mockRejectedValue(
    new ThrottlingException({ $metadata: {}, message: 'slow down' }) as never,
  );
  return { ...service, pets: { ...service.pets, documents } };
}

const rex = { name: 'Rex', categoryId: 1 };
const CASES = [
  ['createPet 201', createPetHandler, () => apiEvent('POST', '/pets', { body: rex }), 201],
  ['listPets 200', listPetsHandler, () => apiEvent('GET', '/pets?limit=1'), 200],
  ['getPet 404', getPetHandler, () => apiEvent('GET', '/pets/12345'), 404],
  ['listPets 400', listPetsHandler, () => apiEvent('GET', '/pets?limit=0'), 400],
  ['createPet 401', createPetHandler, () => apiEvent('POST', '/pets', { body: rex, anonymous: true }), 401],
  [
    'createPet 415',
    createPetHandler,
    () => apiEvent('POST', '/pets', { body: rex, headers: { 'Content-Type': 'text/plain' } }),
    415,
  ],
  ['listPets 503', listPetsHandler, () => apiEvent('GET', '/pets?status=sold'), 503],
] as const;

it.each(CASES)('%s carries them', async (_case, make, event, status) => {
  const handler = make(status === 503 ? failingService() : service) as (
    ...args: unknown[]
  ) => Promise<{ statusCode: number; headers?: Record<string, unknown> }>;
  const answer = await handler(event(), localContext('test'));
  expect(answer.statusCode).toBe(status);
  expect(answer.headers).toMatchObject({ 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
});
