import { beforeAll, describe, expect, it } from 'vitest';
import { createHandler as createPetHandler } from '../../functions/createPet.ts';
import { createHandler as getPetHandler } from '../../functions/getPet.ts';
import { createHandler as listPetsHandler } from '../../functions/listPets.ts';
import { StaticApiKeys } from '../../lib/domain/apiKeys.ts';
import { dependenciesFromEnvironment, type Dependencies } from '../../lib/service.ts';
import { apiEvent, call } from '../support/events.ts';
import { TEST_API_KEY, freshEnvironment, useEmbeddedStore } from '../support/store.ts';

const endpoint = useEmbeddedStore();
let service: Dependencies;
beforeAll(async () => {
  service = dependenciesFromEnvironment(await freshEnvironment(endpoint()));
});

const operations = [
  { name: 'listPets', make: listPetsHandler, method: 'GET', path: '/pets' },
  { name: 'createPet', make: createPetHandler, method: 'POST', path: '/pets', body: { name: 'Rex', categoryId: 1 } },
  { name: 'getPet', make: getPetHandler, method: 'GET', path: '/pets/1' },
] as const;

const REALM = 'Bearer realm="petstore"';
const INVALID = 'Bearer realm="petstore", error="invalid_token"';

describe.each(operations)('authentication on $name', (op) => {
  const send = (authorization: string | undefined, body: unknown = 'body' in op ? op.body : undefined) => {
    const event = apiEvent(op.method, op.path, { anonymous: true, body });
    if (authorization !== undefined) event.headers.Authorization = authorization;
    return call(op.make(service), event);
  };

  it.each<[string, string | undefined, string]>([
    ['no Authorization header', undefined, REALM],
    ['an empty header', '', REALM],
    ['another scheme', `Basic ${Buffer.from('user:pass').toString('base64')}`, REALM],
    ['the key without a scheme', TEST_API_KEY, REALM],
    ['an empty bearer token', 'Bearer ', REALM],
    ['an unknown key', 'Bearer not-the-key', INVALID],
    ['a key with one character changed', `Bearer ${TEST_API_KEY.slice(0, -1)}X`, INVALID],
    ['a key with a suffix', `Bearer ${TEST_API_KEY}x`, INVALID],
    ['a token of illegal characters', 'Bearer a,b c', INVALID],
  ])('answers 401 for %s', async (_case, authorization, challenge) => {
    const res = await send(authorization);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ code: 'UNAUTHORIZED', message: expect.any(String), status: 401 });
    expect(res.headers['www-authenticate']).toBe(challenge);
  });

  it('checks the key before anything else is looked at', async () => {
    const res = await send(undefined, '{not json');
    expect(res.status).toBe(401);
  });

  it('answers 401, not 500, to an event without headers at all', async () => {
    const event = apiEvent(op.method, op.path, { anonymous: true });
    const res = await call(op.make(service), { ...event, headers: null as never, multiValueHeaders: null as never });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(REALM);
  });

  it('accepts the scheme in any case', async () => {
    const res = await send(`bearer ${TEST_API_KEY}`);
    expect(res.status).not.toBe(401);
  });
});

describe('API keys', () => {
  it('accepts each of several configured keys', async () => {
    const keys = StaticApiKeys.fromList('first-key, second-key');
    const list = listPetsHandler({ ...service, keys });
    for (const key of ['first-key', 'second-key']) {
      const event = apiEvent('GET', '/pets', { anonymous: true, headers: { Authorization: `Bearer ${key}` } });
      expect((await call(list, event)).status).toBe(200);
    }
  });

  it('answers 401 to everyone when no key is configured', async () => {
    const list = listPetsHandler({ ...service, keys: new StaticApiKeys([]) });
    expect((await call(list, apiEvent('GET', '/pets'))).status).toBe(401);
  });
});
