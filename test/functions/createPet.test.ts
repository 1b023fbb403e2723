import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { gzipSync } from 'node:zlib';
import { beforeEach, describe, expect, it } from 'vitest';
import { createHandler as createPetHandler } from '../../functions/createPet.ts';
import { createHandler as getPetHandler } from '../../functions/getPet.ts';
import { createHandler as listPetsHandler } from '../../functions/listPets.ts';
import { keyIdOfKey } from '../../lib/domain/apiKeys.ts';
import { MAX_BODY_BYTES } from '../../lib/http/jsonBody.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { getPet as readPet } from '../../lib/store/petReads.ts';
import { createPet as storePet } from '../../lib/store/petWrites.ts';
import type { Dependencies } from '../../lib/service.ts';
import { apiEvent, call } from '../support/events.ts';
import { TEST_API_KEY, freshEnvironment, useEmbeddedStore } from '../support/store.ts';
import { dependenciesFromEnvironment, type Environment } from '../../lib/service.ts';

const endpoint = useEmbeddedStore();
let env: Environment;
let service: Dependencies;
let createPet: ReturnType<typeof createPetHandler>;
let getPet: ReturnType<typeof getPetHandler>;

beforeEach(async () => {
  env = await freshEnvironment(endpoint());
  service = dependenciesFromEnvironment(env);
  createPet = createPetHandler(service);
  getPet = getPetHandler(service);
});

const post = (body: unknown, headers: Record<string, string> = {}) =>
  call(createPet, apiEvent('POST', '/pets', { body, headers }));

async function storedItems(): Promise<Record<string, unknown>[]> {
  const documents = createDocumentClient({ endpoint: env.DYNAMODB_ENDPOINT });
  const { Items } = await documents.send(new ScanCommand({ TableName: env.TABLE_NAME }));
  return Items ?? [];
}

describe('createPet', () => {
  it('answers 201 with the stored Pet, its id and Location', async () => {
    const res = await post({ name: 'Rex', categoryId: 7, status: 'available' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 7, status: 'available' });
    expect(Number.isSafeInteger(res.body.id) && res.body.id > 0).toBe(true);
    expect(res.headers.location).toBe(`/v1/pets/${res.body.id}`);
    const fetched = await call(getPet, apiEvent('GET', `/pets/${res.body.id}`));
    expect(fetched.body).toEqual(res.body);
  });

  it('records the key that created each pet on its item, and never answers it', async () => {
    const otherKey = 'other-client-key-0123456789';
    const both = dependenciesFromEnvironment({ ...env, PETSTORE_API_KEYS: `${TEST_API_KEY},${otherKey}` });
    const [create, get, list] = [createPetHandler(both), getPetHandler(both), listPetsHandler(both)];
    const as = (key: string, headers: Record<string, string> = {}) => ({ Authorization: `Bearer ${key}`, ...headers });
    const rex = { name: 'Rex', categoryId: 7, status: 'available' };
    const plain = await call(create, apiEvent('POST', '/pets', { body: rex, headers: as(TEST_API_KEY) }));
    const keyed = () =>
      apiEvent('POST', '/pets', { body: rex, headers: as(otherKey, { 'Idempotency-Key': 'order-1' }) });
    const first = await call(create, keyed());
    const replay = await call(create, keyed());
    expect(replay.headers['idempotent-replayed']).toBe('true');

    const creators = Object.fromEntries((await storedItems()).map((item) => [item.id, item.createdBy]));
    expect(creators).toEqual({
      [plain.body.id]: keyIdOfKey(TEST_API_KEY),
      [first.body.id]: keyIdOfKey(otherKey),
    });
    const answers = [plain, first, replay];
    for (const id of [plain.body.id, first.body.id])
      answers.push(await call(get, apiEvent('GET', `/pets/${id}`, { headers: as(otherKey) })));
    for (const query of ['', '?status=available'])
      answers.push(await call(list, apiEvent('GET', `/pets${query}`, { headers: as(TEST_API_KEY) })));
    for (const answer of answers) {
      expect(answer.status).toBeLessThan(300);
      expect(JSON.stringify(answer.body)).not.toMatch(/createdBy|writeToken|statusShard/);
    }
    expect(answers.at(-1)!.body).toHaveLength(2);
  });

  it('leaves status out when the client leaves it out', async () => {
    const res = await post({ name: 'Tom', categoryId: 1 });
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('status');
    expect((await storedItems())[0]).not.toHaveProperty('status');
  });

  it('stores the name as sent, inner spaces included, and accepts the largest safe categoryId', async () => {
    const res = await post({ name: 'Rex  \u00a0Max', categoryId: Number.MAX_SAFE_INTEGER });
    expect(res.body).toMatchObject({ name: 'Rex  \u00a0Max', categoryId: Number.MAX_SAFE_INTEGER });
    expect((await storedItems())[0]).toMatchObject({ name: 'Rex  \u00a0Max' });
  });

  it.each([['application/json; charset=utf-8'], ['Application/JSON'], ['application/json;charset="UTF-8"']])(
    'accepts Content-Type %s',
    async (contentType) => {
      expect((await post({ name: 'Rex', categoryId: 1 }, { 'Content-Type': contentType })).status).toBe(201);
    },
  );

  it('accepts a base64-encoded body, as API Gateway may send it', async () => {
    const event = apiEvent('POST', '/pets', { body: '' });
    event.body = Buffer.from(JSON.stringify({ name: 'Rex', categoryId: 1 })).toString('base64');
    event.isBase64Encoded = true;
    expect((await call(createPet, event)).status).toBe(201);
  });

  const longName = 'x'.repeat(257);
  it.each<[string, unknown, number, string, RegExp?]>([
    ['name missing', { categoryId: 1 }, 400, 'VALIDATION_FAILED', /'name' is required/],
    ['categoryId missing', { name: 'Rex' }, 400, 'VALIDATION_FAILED', /'categoryId' is required/],
    ['both missing', {}, 400, 'VALIDATION_FAILED', /'name' is required; 'categoryId' is required/],
    ['name with a lone surrogate', '{"name":"Re\\ud800x","categoryId":1}', 400, 'VALIDATION_FAILED', /lone surrogate/],
    ['name empty', { name: '', categoryId: 1 }, 400, 'VALIDATION_FAILED', /'name' must not be empty/],
    [
      'name blank',
      { name: '   ', categoryId: 1 },
      400,
      'VALIDATION_FAILED',
      /'name' must not start or end with whitespace/,
    ],
    ['name with a leading space', { name: ' Rex', categoryId: 1 }, 400, 'VALIDATION_FAILED', /whitespace/],
    ['name with a trailing NBSP', { name: 'Rex\u00a0', categoryId: 1 }, 400, 'VALIDATION_FAILED', /whitespace/],
    ['name too long', { name: longName, categoryId: 1 }, 400, 'VALIDATION_FAILED', /at most 256/],
    ['name with a control character', { name: 'Re\u0000x', categoryId: 1 }, 400, 'VALIDATION_FAILED', /control/],
    ['name not a string', { name: 42, categoryId: 1 }, 400, 'VALIDATION_FAILED', /'name' must be a string/],
    ['categoryId zero', { name: 'Rex', categoryId: 0 }, 400, 'VALIDATION_FAILED', /'categoryId'/],
    ['categoryId negative', { name: 'Rex', categoryId: -1 }, 400, 'VALIDATION_FAILED', /'categoryId'/],
    ['categoryId fractional', { name: 'Rex', categoryId: 1.5 }, 400, 'VALIDATION_FAILED', /'categoryId'/],
    ['categoryId a string', { name: 'Rex', categoryId: '1' }, 400, 'VALIDATION_FAILED', /'categoryId'/],
    ['categoryId too large', { name: 'Rex', categoryId: 2 ** 53 }, 400, 'VALIDATION_FAILED', /'categoryId'/],
    [
      'categoryId huge literal',
      '{"name":"Rex","categoryId":123456789012345678901234567890}',
      400,
      'VALIDATION_FAILED',
      /'categoryId'/,
    ],
    ['status unknown', { name: 'Rex', categoryId: 1, status: 'lost' }, 400, 'VALIDATION_FAILED', /'status'/],
    ['status null', { name: 'Rex', categoryId: 1, status: null }, 400, 'VALIDATION_FAILED', /'status'/],
    ['id sent by the client', { id: 5, name: 'Rex', categoryId: 1 }, 400, 'VALIDATION_FAILED', /unknown field 'id'/],
    ['an unknown field', { name: 'Rex', categoryId: 1, colour: 'red' }, 400, 'VALIDATION_FAILED', /'colour'/],
    ['a JSON array', '[{"name":"Rex","categoryId":1}]', 400, 'VALIDATION_FAILED', /JSON object/],
    ['a JSON string', '"Rex"', 400, 'VALIDATION_FAILED', /JSON object/],
    ['JSON null', 'null', 400, 'VALIDATION_FAILED', /JSON object/],
    ['malformed JSON', '{"name": "Rex",', 400, 'VALIDATION_FAILED', /not valid JSON/],
    [
      'a __proto__ key',
      '{"name":"Rex","categoryId":1,"__proto__":{"x":1}}',
      400,
      'VALIDATION_FAILED',
      /unknown field '__proto__'/,
    ],
    [
      'a nested __proto__ key',
      '{"name":"Rex","categoryId":{"__proto__":1}}',
      400,
      'VALIDATION_FAILED',
      /unknown field '__proto__'/,
    ],
    [
      'a constructor.prototype key',
      '{"name":"Rex","categoryId":1,"constructor":{"prototype":{}}}',
      400,
      'VALIDATION_FAILED',
      /unknown field 'constructor'/,
    ],
    ['an empty body', '', 400, 'VALIDATION_FAILED', /JSON object is required/],
    [
      'a body over 16 KiB',
      JSON.stringify({ name: 'Rex', categoryId: 1, pad: 'x'.repeat(MAX_BODY_BYTES) }),
      413,
      'PAYLOAD_TOO_LARGE',
    ],
  ])('rejects %s', async (_case, body, status, code, message) => {
    const res = await post(body);
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ code, message: expect.any(String), status });
    if (message) expect(res.body.message).toMatch(message);
    expect(await storedItems()).toEqual([]);
  });

  it.each([
    ['a lone byte FF', [0xff]],
    ['an overlong C0 AF', [0xc0, 0xaf]],
    ['an encoded surrogate ED A0 80', [0xed, 0xa0, 0x80]],
    ['a truncated E2 82', [0xe2, 0x82]],
  ])('answers 400 when the body is not UTF-8 (%s in the name), storing nothing', async (_case, bytes) => {
    const raw = Buffer.concat([Buffer.from('{"name":"R'), Buffer.from(bytes), Buffer.from('x","categoryId":1}')]);
    const event = apiEvent('POST', '/pets', { body: '' });
    event.body = raw.toString('base64');
    event.isBase64Encoded = true;
    const res = await call(createPet, event);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'VALIDATION_FAILED',
      message: 'Invalid body: the body is not valid UTF-8.',
      status: 400,
    });
    expect(await storedItems()).toEqual([]);
  });

  it('answers 400 for a body API Gateway decoded with U+FFFD in place of bytes that were not UTF-8, storing nothing', async () => {
    // What the function gets on AWS for {"name":"R<FF>x",...}: the API declares no binary media types.
    const event = apiEvent('POST', '/pets', {
      body: Buffer.from([...Buffer.from('{"name":"R'), 0xff, ...Buffer.from('x","categoryId":1}')]).toString('utf8'),
    });
    expect(event.body).toContain('\ufffd');
    const res = await call(createPet, event);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_FAILED', message: expect.stringContaining('U+FFFD'), status: 400 });
    expect(await storedItems()).toEqual([]);
  });

  it.each([
    ['missing', undefined],
    ['text/plain', 'text/plain'],
    ['a vendor JSON type', 'application/vnd.api+json'],
    ['another charset', 'application/json; charset=latin1'],
    ['form data', 'application/x-www-form-urlencoded'],
  ])('answers 415 when Content-Type is %s', async (_case, contentType) => {
    const event = apiEvent('POST', '/pets', { body: { name: 'Rex', categoryId: 1 } });
    delete event.headers['Content-Type'];
    delete event.multiValueHeaders['Content-Type'];
    if (contentType) event.headers['Content-Type'] = contentType;
    const res = await call(createPet, event);
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ code: 'UNSUPPORTED_MEDIA_TYPE', message: expect.any(String), status: 415 });
    expect(await storedItems()).toEqual([]);
  });

  it.each([['gzip'], ['GZIP'], ['br'], ['deflate'], ['identity, gzip'], ['x-unknown']])(
    'answers 415 with Accept-Encoding: identity to a body sent with Content-Encoding: %s (RFC 7694)',
    async (contentEncoding) => {
      const event = apiEvent('POST', '/pets', { body: '', headers: { 'Content-Encoding': contentEncoding } });
      // The bytes a client would send: the JSON gzipped, which API Gateway hands over base64-encoded.
      event.body = gzipSync(JSON.stringify({ name: 'Rex', categoryId: 1 })).toString('base64');
      event.isBase64Encoded = true;
      const res = await call(createPet, event);
      expect(res.status).toBe(415);
      expect(res.body).toEqual({
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: expect.stringMatching(/Content-Encoding/),
        status: 415,
      });
      expect(res.headers['accept-encoding']).toBe('identity');
      expect(await storedItems()).toEqual([]);
    },
  );

  it.each([['identity'], ['Identity'], ['']])(
    'takes a body sent with Content-Encoding: %j',
    async (contentEncoding) => {
      expect((await post({ name: 'Rex', categoryId: 1 }, { 'Content-Encoding': contentEncoding })).status).toBe(201);
    },
  );

  it('answers a 415 for the media type without Accept-Encoding', async () => {
    const res = await post({ name: 'Rex', categoryId: 1 }, { 'Content-Type': 'text/plain' });
    expect(res.status).toBe(415);
    expect(res.headers).not.toHaveProperty('accept-encoding');
  });

  it('gives 500 concurrent creates 500 distinct ids, every one readable', async () => {
    // 500 requests queue on one in-process dynalite: budgets for that, not for a healthy store.
    service = dependenciesFromEnvironment({ ...env, STORE_BUDGET_MS: '60000', DYNAMODB_ATTEMPT_TIMEOUT_MS: '30000' });
    createPet = createPetHandler(service);
    getPet = getPetHandler(service);
    const created = await Promise.all(
      Array.from({ length: 500 }, (_, i) => post({ name: `Pet ${i}`, categoryId: (i % 5) + 1 })),
    );
    expect(created.filter((res) => res.status !== 201).map((res) => res.body)).toEqual([]);
    const ids = created.map((res) => res.body.id as number);
    expect(new Set(ids).size).toBe(500);
    expect(ids.every((id) => Number.isSafeInteger(id) && id > 0)).toBe(true);
    const fetched = await Promise.all(created.map((res) => call(getPet, apiEvent('GET', `/pets/${res.body.id}`))));
    expect(fetched.map((res) => res.body)).toEqual(created.map((res) => res.body));
  });

  it('draws a new id when one is taken, and never overwrites a stored pet', async () => {
    const ids = [1001, 1001, 1002];
    const pets = dependenciesFromEnvironment(env).pets;
    const newId = () => ids.shift() ?? 9999;
    await storePet(pets, { name: 'First', categoryId: 1 }, { newId });
    const second = await storePet(pets, { name: 'Second', categoryId: 1 }, { newId });
    expect(second.id).toBe(1002);
    expect(await readPet(pets, 1001)).toMatchObject({ name: 'First' });
  });
});
