/**
 * Property-based tests (fast-check) of the three handlers, in process, on dynalite: whatever a
 * client sends, the answer is a success that round-trips exactly, or a 4xx Error of the spec's
 * shape; never a 5xx, never a stack trace; and the table holds exactly the pets answered 201.
 * FAST_CHECK_RUNS sets the cases per property (default 300, the inner loop; more for a longer hunt).
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createHandler as createPetHandler } from '../../functions/createPet.ts';
import { createHandler as getPetHandler } from '../../functions/getPet.ts';
import { createHandler as listPetsHandler } from '../../functions/listPets.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { PET_STATUSES, type Pet } from '../../lib/domain/schemas.ts';
import { dependenciesFromEnvironment, type Environment, type Dependencies } from '../../lib/service.ts';
import { toPet } from '../../lib/store/petReads.ts';
import { apiEvent, call, routeOf } from '../support/events.ts';
import { freshEnvironment, useEmbeddedStore } from '../support/store.ts';

const RUNS = Number(process.env.FAST_CHECK_RUNS ?? 300);
const endpoint = useEmbeddedStore();
let env: Environment;
let service: Dependencies;
/** Every pet answered 201, by id. */
const acknowledged = new Map<number, Pet>();

beforeAll(async () => {
  env = await freshEnvironment(endpoint());
  service = dependenciesFromEnvironment(env);
  // Pets to find, list and page through from the first case on.
  for (const [i, status] of PET_STATUSES.entries()) await createOk({ name: `Seed ${i}`, categoryId: i + 1, status });
});

async function createOk(body: unknown): Promise<Pet> {
  const res = await call(createPetHandler(service), apiEvent('POST', '/pets', { body }));
  if (res.status !== 201) throw new Error(JSON.stringify(res));
  acknowledged.set(res.body.id, res.body);
  return res.body;
}

type Answer = Awaited<ReturnType<typeof call>>;

/** A 4xx Error of exactly the spec's shape, telling nothing of the internals. */
function expectClientError(res: Answer): void {
  expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(400);
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
  expect(Object.keys(res.body).sort()).toEqual(['code', 'message', 'status']);
  expect(res.body).toEqual({
    code: expect.stringMatching(/^[A-Z_]+$/),
    message: expect.any(String),
    status: res.status,
  });
  expect(res.body.message).not.toMatch(/\n\s+at |Error:|node_modules/);
}

/** An object literal written out key by key, so `__proto__` is an own key in the JSON text. */
const objectText = (entries: [string, unknown][]) =>
  `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value) ?? 'null'}`).join(',')}}`;

const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({
    unit: fc.constantFrom('\u0000', '\u001f', '\u007f', '\ud800', '\udfff', '\ufeff', ' ', 'a', '\u00e9'),
    maxLength: 20,
  }),
);
const anyNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 2 ** 53, 2 ** 53 - 1, 1.5, 1e308, -0, Number.MIN_VALUE),
);
const fieldValue = fc.oneof(anyText, anyNumber, fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 3 }));
const fieldName = fc.oneof(
  fc.constantFrom('name', 'categoryId', 'status', 'id', '__proto__', 'constructor', 'prototype'),
  fc.string({ maxLength: 10 }),
);
const validPet = fc.record(
  {
    name: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 300 }),
    categoryId: fc.oneof(fc.integer({ min: 1 }), fc.constant(Number.MAX_SAFE_INTEGER), fc.maxSafeInteger()),
    status: fc.constantFrom(...PET_STATUSES),
  },
  { requiredKeys: ['name', 'categoryId'] },
);

/** A createPet body as the wire carries it: text, or raw bytes (sent base64 as API Gateway does). */
const createBody: fc.Arbitrary<{ text?: string; bytes?: Uint8Array }> = fc.oneof(
  validPet.map((pet) => ({ text: JSON.stringify(pet) })),
  fc
    .tuple(validPet, fieldName, fieldValue)
    .map(([pet, key, value]) => ({ text: objectText([...Object.entries(pet), [key, value]]) })),
  fc.array(fc.tuple(fieldName, fieldValue), { maxLength: 5 }).map((entries) => ({ text: objectText(entries) })),
  fc.jsonValue().map((value) => ({ text: JSON.stringify(value) })),
  fc.string({ unit: 'binary', maxLength: 100 }).map((text) => ({ text })),
  fc.integer({ min: 1, max: 9_000 }).map((depth) => ({ text: `${'['.repeat(depth)}${']'.repeat(depth)}` })),
  fc.bigInt({ min: 10n ** 15n, max: 10n ** 40n }).map((n) => ({ text: `{"name":"Big","categoryId":${n}}` })),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => ({ bytes })),
  fc.tuple(validPet, fc.uint8Array({ minLength: 1, maxLength: 4 })).map(([pet, bytes]) => ({
    bytes: Buffer.concat([
      Buffer.from(`{"name":"${pet.name.replace(/["\\]/g, '')}`),
      Buffer.from(bytes),
      Buffer.from(`","categoryId":1}`),
    ]),
  })),
);

/** What a stored pet must be: the body as sent. */
const expectedPet = (sent: Record<string, unknown>, id: number): Pet => {
  const pet: Pet = { id, name: String(sent.name), categoryId: Number(sent.categoryId) };
  if (sent.status !== undefined) pet.status = sent.status as Pet['status'];
  return pet;
};

describe('properties', () => {
  it(`createPet: ${RUNS} bodies, each 201 round-tripping through getPet, or a 4xx Error`, async () => {
    const createPet = createPetHandler(service);
    const getPet = getPetHandler(service);
    await fc.assert(
      fc.asyncProperty(createBody, async ({ text, bytes }) => {
        const event = apiEvent('POST', '/pets', { body: text ?? '' });
        if (bytes) {
          event.body = Buffer.from(bytes).toString('base64');
          event.isBase64Encoded = true;
        }
        const res = await call(createPet, event);
        if (res.status !== 201) return expectClientError(res);
        expect(res.body).toEqual(expectedPet(JSON.parse(text ?? Buffer.from(bytes!).toString('utf8')), res.body.id));
        expect(res.headers.location).toBe(`/v1/pets/${res.body.id}`);
        acknowledged.set(res.body.id, res.body);
        expect((await call(getPet, apiEvent('GET', `/pets/${res.body.id}`))).body).toEqual(res.body);
      }),
      { numRuns: RUNS },
    );
  });

  it(`listPets: ${RUNS} queries (any parameters, repeated ones), each a page of stored pets or a 4xx Error`, async () => {
    const listPets = listPetsHandler(service);
    const parameter = fc.tuple(
      fc.oneof(fc.constantFrom('limit', 'status', 'cursor'), fc.string({ maxLength: 8 })),
      fc.oneof(
        fc.string({ unit: 'binary', maxLength: 40 }),
        anyNumber.map(String),
        fc.constantFrom(...PET_STATUSES, '', '0', '1', '100', '101', '20.0', '+5', '1e2', '0x10'),
        fc.base64String({ maxLength: 60 }),
      ),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(parameter, { maxLength: 6 }), async (parameters) => {
        const query = new URLSearchParams(parameters);
        const res = await call(listPets, apiEvent('GET', `/pets?${query}`));
        if (res.status !== 200) return expectClientError(res);
        expect(Array.isArray(res.body)).toBe(true);
        for (const pet of res.body as Pet[]) expect(pet).toEqual(acknowledged.get(pet.id));
      }),
      { numRuns: RUNS },
    );
  });

  it(`getPet: ${RUNS} path parameters, each the stored pet, 404 or a 4xx Error`, async () => {
    const getPet = getPetHandler(service);
    const ids = [...acknowledged.keys()];
    const petId = fc.oneof(
      fc.constantFrom(...ids).map(String),
      fc.string({ unit: 'binary', maxLength: 30 }),
      anyNumber.map(String),
      fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String),
      fc.constantFrom('0', '-1', '01', ' 1', '1 ', '1.0', '9007199254740992', '%31', '__proto__'),
    );
    await fc.assert(
      fc.asyncProperty(petId, async (id) => {
        const event = apiEvent('GET', '/pets/1', { route: routeOf('getPet') });
        event.pathParameters = { petId: id };
        const res = await call(getPet, event);
        if (res.status === 200) expect(res.body).toEqual(acknowledged.get(Number(id)));
        else expectClientError(res);
      }),
      { numRuns: RUNS },
    );
  });

  it(`getPet: ${RUNS} int64 ids, each the stored pet or 404 NOT_FOUND naming it; ${RUNS} integers beyond int64, each 400`, async () => {
    const getPet = getPetHandler(service);
    const answerTo = async (petId: string) => {
      const event = apiEvent('GET', '/pets/1', { route: routeOf('getPet') });
      event.pathParameters = { petId };
      return call(getPet, event);
    };
    const int64 = fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.bigInt({ min: -3n, max: 3n }));
    await fc.assert(
      fc.asyncProperty(fc.oneof(int64, fc.constantFrom(...[...acknowledged.keys()].map(BigInt))), async (id) => {
        const res = await answerTo(String(id));
        const stored = acknowledged.get(Number(id));
        if (stored && BigInt(stored.id) === id) expect(res).toMatchObject({ status: 200, body: stored });
        else expect(res.body).toEqual({ code: 'NOT_FOUND', message: `No pet has the id ${id}.`, status: 404 });
      }),
      { numRuns: RUNS },
    );
    const beyond = fc.oneof(
      fc.bigInt({ min: 2n ** 63n, max: 2n ** 80n }),
      fc.bigInt({ min: -(2n ** 80n), max: -(2n ** 63n) - 1n }),
    );
    await fc.assert(
      fc.asyncProperty(beyond, async (id) => {
        expect((await answerTo(String(id))).status).toBe(400);
      }),
      { numRuns: RUNS },
    );
  });

  it('leaves exactly the acknowledged pets in the table, and lists each exactly once', async () => {
    const documents = createDocumentClient({ endpoint: env.DYNAMODB_ENDPOINT });
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await documents.send(new ScanCommand({ TableName: env.TABLE_NAME, ExclusiveStartKey: start }));
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    const byId = <T extends { id?: unknown }>(a: T, b: T) => Number(a.id) - Number(b.id);
    expect(items.map(toPet).sort(byId)).toEqual([...acknowledged.values()].sort(byId));

    const listPets = listPetsHandler(service);
    const listed: Pet[] = [];
    let next: string | undefined = '/pets?limit=100';
    for (let page = 0; next && page < 1_000; page++) {
      const res: Answer = await call(listPets, apiEvent('GET', next));
      listed.push(...(res.body as Pet[]));
      next = /<[^>]*\/v1(\/pets\?[^>]*)>; rel="next"/.exec(res.headers.link ?? '')?.[1];
    }
    expect(listed.sort(byId)).toEqual([...acknowledged.values()].sort(byId));
  });
});
