import { beforeAll, describe, expect, it } from 'vitest';
import { createHandler as createPetHandler } from '../../functions/createPet.ts';
import { createHandler as getPetHandler } from '../../functions/getPet.ts';
import { dependenciesFromEnvironment, type Dependencies } from '../../lib/service.ts';
import type { Pet } from '../../lib/domain/schemas.ts';
import { apiEvent, call } from '../support/events.ts';
import { freshEnvironment, useEmbeddedStore } from '../support/store.ts';

const endpoint = useEmbeddedStore();
let service: Dependencies;
let rex: Pet;

beforeAll(async () => {
  service = dependenciesFromEnvironment(await freshEnvironment(endpoint()));
  const created = await call(
    createPetHandler(service),
    apiEvent('POST', '/pets', { body: { name: 'Rex', categoryId: 3, status: 'sold' } }),
  );
  rex = created.body;
});

const getPetAt = (now: Date) => getPetHandler({ ...service, now: () => now });
const get = (path: string, options = {}) => call(getPetHandler(service), apiEvent('GET', path, options));

const DEPRECATION_HEADERS = {
  deprecation: `@${Date.UTC(2026, 0, 1) / 1000}`,
  sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
  // Absolute, as every Link the service emits: the stage's own address (the event's domainName).
  link: '<https://api.test/v1/pets>; rel="successor-version"',
};

describe('getPet', () => {
  it('answers 200 with the Pet', async () => {
    const res = await get(`/pets/${rex.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: rex.id, name: 'Rex', categoryId: 3, status: 'sold' });
  });

  it('refuses a body, as the local API and the web ACL do (a stage may turn its web ACL off), reading nothing', async () => {
    const res = await get(`/pets/${rex.id}`, { body: '{}' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'VALIDATION_FAILED',
      message: 'A GET request must not have a body.',
      status: 400,
    });
  });

  it('answers 404 NOT_FOUND for an unknown id', async () => {
    const res = await get(`/pets/${rex.id + 1}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'NOT_FOUND', message: expect.any(String), status: 404 });
  });

  // The spec's petId is an int64, and its answer for an animal that does not exist is 404: an id no
  // pet can have (ids are 1 to 2^53 - 1) names no pet, like any other unknown id.
  it.each([
    ['0', '0'],
    ['-259', '-259'],
    ['-0', '0'],
    ['9007199254740992', '9007199254740992'],
    ['9223372036854775807', '9223372036854775807'],
    ['-9223372036854775808', '-9223372036854775808'],
  ])('answers 404 NOT_FOUND for petId %s, an int64 no pet has, naming it exactly', async (petId, named) => {
    const res = await get(`/pets/${petId}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'NOT_FOUND', message: `No pet has the id ${named}.`, status: 404 });
  });

  it.each([
    'abc',
    '1.5',
    '1e3',
    '%20',
    '+1',
    '01',
    '-01',
    '--1',
    '-',
    '1-',
    '9223372036854775808',
    '-9223372036854775809',
    '99999999999999999999999',
  ])('answers 400 for petId %s, which is not an int64 written as JSON writes one', async (petId) => {
    const res = await get(`/pets/${petId}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'VALIDATION_FAILED',
      message: "Invalid path: 'petId' must be an integer from -9223372036854775808 to 9223372036854775807.",
      status: 400,
    });
  });

  it.each([
    ['a found pet', () => `/pets/${rex.id}`, {}, 200],
    ['an unknown pet', () => '/pets/123', {}, 404],
    ['a bad id', () => '/pets/abc', {}, 400],
    ['no API key', () => `/pets/${rex.id}`, { anonymous: true }, 401],
  ])('tells of its deprecation on %s', async (_case, path, options, status) => {
    const res = await get(path(), options);
    expect(res.status).toBe(status);
    expect(res.headers).toMatchObject(DEPRECATION_HEADERS);
  });

  it('still answers the second before the sunset', async () => {
    const res = await call(getPetAt(new Date('2030-12-04T23:59:59Z')), apiEvent('GET', `/pets/${rex.id}`));
    expect(res.status).toBe(200);
  });

  it.each(['2030-12-05T00:00:00Z', '2031-06-01T00:00:00Z'])(
    'answers 410 GONE at and after the sunset (%s)',
    async (now) => {
      const res = await call(getPetAt(new Date(now)), apiEvent('GET', `/pets/${rex.id}`));
      expect(res.status).toBe(410);
      expect(res.body).toEqual({ code: 'GONE', message: expect.stringContaining('/v1/pets'), status: 410 });
      expect(res.headers).toMatchObject(DEPRECATION_HEADERS);
    },
  );
});
