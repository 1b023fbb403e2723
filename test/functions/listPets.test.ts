import { beforeAll, describe, expect, it } from 'vitest';
import { createHandler as createPetHandler } from '../../functions/createPet.ts';
import { createHandler as listPetsHandler } from '../../functions/listPets.ts';
import { CursorCodec, fixedSecret } from '../../lib/domain/pagination.ts';
import { dependenciesFromEnvironment, type Environment } from '../../lib/service.ts';
import type { Pet } from '../../lib/domain/schemas.ts';
import { apiEvent, call } from '../support/events.ts';
import { freshEnvironment, useEmbeddedStore } from '../support/store.ts';

const endpoint = useEmbeddedStore();
const STATUSES = ['available', 'pending', 'sold', undefined] as const;

/** A table with 57 pets: statuses cycle available, pending, sold, none. */
let env: Environment;
let listPets: ReturnType<typeof listPetsHandler>;
let pets: Pet[];

beforeAll(async () => {
  env = await freshEnvironment(endpoint());
  const service = dependenciesFromEnvironment(env);
  listPets = listPetsHandler(service);
  const createPet = createPetHandler(service);
  pets = [];
  for (let i = 0; i < 57; i++) {
    const status = STATUSES[i % 4];
    const res = await call(
      createPet,
      apiEvent('POST', '/pets', { body: { name: `Pet ${i}`, categoryId: 1, ...(status ? { status } : {}) } }),
    );
    pets.push(res.body);
  }
});

const list = (query = '') => call(listPets, apiEvent('GET', `/pets${query}`));

function nextLink(link: string | undefined): URL | undefined {
  const match = link && /^<([^>]+)>; rel="next"$/.exec(link);
  return match ? new URL(match[1] as string) : undefined;
}

/** Follows `next` until it is absent, returning every page. */
async function walk(query: string): Promise<Pet[][]> {
  const pages: Pet[][] = [];
  let target: string | undefined = `/pets${query}`;
  while (target) {
    const res = await call(listPets, apiEvent('GET', target));
    expect(res.status).toBe(200);
    pages.push(res.body);
    const next = nextLink(res.headers.link);
    target = next ? `${next.pathname.replace(/^\/v1/, '')}${next.search}` : undefined;
    expect(pages.length).toBeLessThan(100);
  }
  return pages;
}

const ids = (list: Pet[]) => list.map((pet) => pet.id);

describe('listPets', () => {
  it('refuses a body, as the local API and the web ACL do (a stage may turn its web ACL off)', async () => {
    const res = await call(listPets, apiEvent('GET', '/pets', { body: { limit: 1 } }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'VALIDATION_FAILED',
      message: 'A GET request must not have a body.',
      status: 400,
    });
  });

  it('answers a plain JSON array of Pets, 20 by default', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body).toHaveLength(20);
    for (const pet of res.body) expect(pets).toContainEqual(pet);
  });

  it.each([1, 2, 19, 56, 57, 100])('gives exactly limit=%i pets when that many exist', async (limit) => {
    const res = await list(`?limit=${limit}`);
    expect(res.body).toHaveLength(Math.min(limit, pets.length));
    expect(res.headers.link !== undefined).toBe(limit < pets.length);
  });

  it('filters by status through the index, in ascending id order', async () => {
    for (const status of ['available', 'pending', 'sold'] as const) {
      const res = await list(`?status=${status}&limit=100`);
      const expected = pets
        .filter((pet) => pet.status === status)
        .map((pet) => pet.id)
        .sort((a, b) => a - b);
      expect(ids(res.body)).toEqual(expected);
      expect(res.body.every((pet: Pet) => pet.status === status)).toBe(true);
    }
  });

  it.each([
    '',
    '?limit=1',
    '?limit=7',
    '?limit=19',
    '?limit=100',
    '?status=available&limit=3',
    '?status=sold&limit=15',
    '?status=pending&limit=1',
  ])('following next from %s returns every pet exactly once', async (query) => {
    const params = new URLSearchParams(query);
    const limit = Number(params.get('limit') ?? 20);
    const status = params.get('status');
    const pages = await walk(query);
    const expected = pets.filter((pet) => !status || pet.status === status);
    expect(ids(pages.flat()).sort()).toEqual(ids(expected).sort());
    expect(new Set(ids(pages.flat())).size).toBe(expected.length);
    for (const page of pages.slice(0, -1)) expect(page).toHaveLength(limit);
    expect(pages.at(-1)?.length).toBeGreaterThan(0);
  });

  it('keeps limit and status in the next link', async () => {
    const res = await list('?status=available&limit=2');
    const next = nextLink(res.headers.link);
    expect(next?.origin).toBe('https://api.test');
    expect(next?.pathname).toBe('/v1/pets');
    expect(next?.searchParams.get('limit')).toBe('2');
    expect(next?.searchParams.get('status')).toBe('available');
    expect(next?.searchParams.get('cursor')).toMatch(/^[\w-]+\.[\w-]+$/);
  });

  it("builds the next link on the stage's own domain, never on the Host a client sent", async () => {
    const res = await call(
      listPets,
      apiEvent('GET', '/pets?limit=1', { headers: { Host: 'evil.example', 'X-Forwarded-Proto': 'http' } }),
    );
    expect(nextLink(res.headers.link)?.origin).toBe('https://api.test');
  });

  it('answers an empty array and no link when nothing matches', async () => {
    const empty = listPetsHandler(dependenciesFromEnvironment(await freshEnvironment(endpoint())));
    const res = await call(empty, apiEvent('GET', '/pets'));
    expect(res.body).toEqual([]);
    expect(res.headers.link).toBeUndefined();
  });

  it.each([
    ['limit=0'],
    ['limit=101'],
    ['limit=-1'],
    ['limit=abc'],
    ['limit=1.5'],
    ['limit='],
    ['limit=1e2'],
    ['limit=%2010'],
    ['status=lost'],
    ['status='],
    ['status=AVAILABLE'],
    ['cursor='],
  ])('answers 400 VALIDATION_FAILED for %s', async (query) => {
    const res = await list(`?${query}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'VALIDATION_FAILED',
      message: expect.stringMatching(/'(limit|status|cursor)'/),
      status: 400,
    });
  });

  describe('rejects a cursor it did not give for this query', () => {
    let cursor: string;
    beforeAll(async () => {
      cursor = nextLink((await list('?limit=2')).headers.link)?.searchParams.get('cursor') as string;
    });

    it('garbage', async () => {
      expect((await list('?cursor=not-a-cursor')).status).toBe(400);
      expect((await list('?cursor=a.b.c')).status).toBe(400);
    });
    it('tampered payload', async () => {
      const [b, s] = cursor.split('.') as [string, string];
      const payload = JSON.parse(Buffer.from(b, 'base64url').toString());
      const forged = `${Buffer.from(JSON.stringify({ ...payload, id: payload.id + 1 })).toString('base64url')}.${s}`;
      expect((await list(`?limit=2&cursor=${forged}`)).body).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    });
    it('tampered signature', async () => {
      const [b, s] = cursor.split('.') as [string, string];
      const flipped = Buffer.from(s, 'base64url');
      flipped[0] = (flipped[0] ?? 0) ^ 1;
      expect((await list(`?limit=2&cursor=${b}.${flipped.toString('base64url')}`)).status).toBe(400);
    });
    it('signed with another secret (another deployment)', async () => {
      const foreign = await new CursorCodec(fixedSecret('another-secret-of-another-stage')).encode(
        pets[0]!.id,
        undefined,
      );
      expect((await list(`?limit=2&cursor=${foreign}`)).status).toBe(400);
    });
    it('made for another status filter', async () => {
      expect((await list(`?limit=2&status=sold&cursor=${cursor}`)).status).toBe(400);
    });
  });
});
