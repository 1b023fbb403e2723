/**
 * The published contract against the service, case by case: every value of the corpus is judged by
 * ajv against openapi.json (the schema a client would validate with) and sent through the real
 * handlers to dynalite; the service must answer 400 exactly when the schema rejects. A client that
 * validates with openapi.json then never disagrees with the service.
 *
 * Parameters arrive as text: an integer parameter is read as its `x-text-pattern` says (the spelling
 * the document publishes) and then judged by its schema, its `int64` format exactly (OpenAPI's format
 * registry: signed 64 bits); a repeated one counts by its last value (docs/api.md). One rule of a name
 * is in its description, not its pattern, which no engine but ECMA-262's could run: no lone surrogate. A cursor the schema accepts can still be one the service never gave: that 400 is the
 * signature's, which no schema can state, so only spellings of a cursor the service gives are compared.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_FILE } from '../../contract/files.ts';
import { createHandler as createPetHandler } from '../../functions/createPet.ts';
import { createHandler as getPetHandler } from '../../functions/getPet.ts';
import { createHandler as listPetsHandler } from '../../functions/listPets.ts';
import { dependenciesFromEnvironment } from '../../lib/service.ts';
import { cursorCodecFor } from '../../lib/store/cursorSecret.ts';
import { apiEvent, call, routeOf } from '../support/events.ts';
import { freshEnvironment, useEmbeddedStore } from '../support/store.ts';

const document = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));
// unicodeRegExp (ajv's default, stated here): patterns are ECMA-262 regexes with the `u` flag, as the service runs them.
const ajv = new Ajv2020({ strict: false, allErrors: true, unicodeRegExp: true, formats: { int64: true } });
ajv.addSchema(document, 'openapi.json');
const validators = new Map<string, ValidateFunction>();
function validatorAt(pointer: string): ValidateFunction {
  if (!validators.has(pointer)) validators.set(pointer, ajv.compile({ $ref: `openapi.json#${pointer}` }));
  return validators.get(pointer)!;
}

const validNewPet = validatorAt('/components/schemas/NewPet');
const parameter = (name: string) =>
  document.components.parameters[name] as { schema: object; 'x-text-pattern'?: string };

/** What the schema says of a parameter's text: an integer one is first read as the document spells integers. */
function parameterAccepts(name: string, text: string): boolean {
  const { schema, 'x-text-pattern': textPattern } = parameter(name);
  const validate = validatorAt(`/components/parameters/${name}/schema`);
  if ((schema as { type?: string }).type !== 'integer') return validate(text);
  expect(textPattern, `${name} publishes how an integer is written`).toBeDefined();
  if (!new RegExp(textPattern!, 'u').test(text)) return false;
  const int64 = (schema as { format?: string }).format === 'int64';
  return (!int64 || BigInt.asIntN(64, BigInt(text)) === BigInt(text)) && validate(Number(text));
}

/** A name's rule stated in its description: a string with a lone surrogate is refused. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const nameRules = document.components.schemas.NewPet.properties.name.description as string;
const newPetAccepts = (body: Record<string, unknown>): boolean =>
  validNewPet(body) && !(typeof body.name === 'string' && LONE_SURROGATE.test(body.name));

const endpoint = useEmbeddedStore();
let createPet: ReturnType<typeof createPetHandler>;
let listPets: ReturnType<typeof listPetsHandler>;
let getPet: ReturnType<typeof getPetHandler>;
let storedId: number;
let genuineCursor = '';

beforeAll(async () => {
  const service = dependenciesFromEnvironment(await freshEnvironment(endpoint()));
  createPet = createPetHandler(service);
  listPets = listPetsHandler(service);
  getPet = getPetHandler(service);
  for (const name of ['Rex', 'Max', 'Bo']) {
    const res = await call(createPet, apiEvent('POST', '/pets', { body: { name, categoryId: 1 } }));
    expect(res.status).toBe(201);
    storedId = res.body.id;
  }
  const first = await call(listPets, apiEvent('GET', '/pets?limit=1'));
  const given = new URL(/<([^>]+)>/.exec(first.headers.link ?? '')![1]!).searchParams.get('cursor')!;
  expect(
    (await call(listPets, apiEvent('GET', `/pets?${new URLSearchParams({ limit: '1', cursor: given })}`))).status,
  ).toBe(200);
  // The cursor the service's own codec gives for a page ending at the first id whose cursor has
  // characters of both alphabets to respell and a body with unused bits (the drawn ids' cursors may not).
  const codec = cursorCodecFor(service);
  for (let id = 1; !genuineCursor; id += 1) {
    const cursor = await codec.encode(id, undefined);
    const [body, signature] = cursor.split('.') as [string, string];
    if (/[-_]/.test(signature) && body.length % 4 !== 0) genuineCursor = cursor;
  }
});

/** One case of the differential: the service answers 400 exactly when the schema rejects. */
function expectAgreement(schemaAccepts: boolean, status: number, accepted: readonly number[]) {
  if (schemaAccepts) expect(accepted).toContain(status);
  else expect(status).toBe(400);
}

const cp = (codePoint: number) => String.fromCodePoint(codePoint);
const names: [string, unknown][] = [
  ['empty', ''],
  ['one space', ' '],
  ['three spaces', '   '],
  ['NBSP', '\u00a0'],
  ['a tab', '\t'],
  ['tab inside', 'Re\tx'],
  ['leading space', ' Rex'],
  ['trailing space', 'Rex '],
  ['leading NBSP', '\u00a0Rex'],
  ['trailing ideographic space', 'Rex\u3000'],
  ['trailing line separator', 'Rex\u2028'],
  ['leading BOM', '\ufeffRex'],
  ['space inside', 'Rex Max'],
  ['NBSP inside', 'Rex\u00a0Max'],
  ['U+FFFD inside (bytes that were not UTF-8, as API Gateway hands them on)', 'R\ufffdx'],
  ['U+FFFD alone', '\ufffd'],
  ['one character', 'R'],
  ['256 characters', 'x'.repeat(256)],
  ['257 characters', 'x'.repeat(257)],
  ['256 astral characters', cp(0x1f415).repeat(256)],
  ['257 astral characters', cp(0x1f415).repeat(257)],
  ['50 spaces and 256 characters', `${' '.repeat(50)}${'x'.repeat(256)}`],
  ['256 characters and a space', `${'x'.repeat(255)} `],
  ['a combining mark alone', '\u0301'],
  ['a zero-width space', '\u200b'],
  ['a lone surrogate', 'Re\ud800x'],
  ['a lone low surrogate at the end', 'Rex\udc00'],
  ['a surrogate pair', 'Re\ud83d\udc15x'],
  ['a trailing newline', 'Rex\n'],
  ['a trailing U+205F', 'Rex\u205f'],
  ['a leading U+1680', '\u1680Rex'],
  ['U+FEFF inside', 'Re\ufeffx'],
  ['a zero-width joiner at the end', 'Rex\u200d'],
  ['a control character', 'Re\u0000x'],
  ['DEL', 'Re\u007fx'],
  ['a C1 control', 'Re\u0085x'],
  ['a number', 42],
  ['null', null],
  ['true', true],
  ['an array', ['Rex']],
  ['an object', { name: 'Rex' }],
];
const categoryIds: [string, unknown][] = [
  ['0', 0],
  ['-1', -1],
  ['1', 1],
  ['1.5', 1.5],
  ['1.0', 1.0],
  ['2^53 - 1', 2 ** 53 - 1],
  ['2^53', 2 ** 53],
  ['1e300', 1e300],
  ['a string', '1'],
  ['null', null],
  ['true', true],
  ['an array', [1]],
];
const statuses: [string, unknown][] = [
  ['available', 'available'],
  ['pending', 'pending'],
  ['sold', 'sold'],
  ['Available', 'Available'],
  ['empty', ''],
  ['trailing space', 'sold '],
  ['null', null],
  ['a number', 1],
  ['an array', ['sold']],
];

describe('the published schema and the service agree', () => {
  it('the description of a name states the rule its pattern leaves out', () => {
    expect(nameRules).toContain('no lone surrogate');
  });

  it.each(names)('on a name: %s', async (_case, name) => {
    await expectBodyAgreement({ name, categoryId: 1 });
  });

  it.each(categoryIds)('on a categoryId: %s', async (_case, categoryId) => {
    await expectBodyAgreement({ name: 'Rex', categoryId });
  });

  it.each(statuses)('on a status: %s', async (_case, status) => {
    await expectBodyAgreement({ name: 'Rex', categoryId: 1, status });
  });

  it.each([
    ['0'],
    ['1'],
    ['20'],
    ['100'],
    ['101'],
    ['1.0'],
    ['01'],
    ['+5'],
    [' 5'],
    ['5 '],
    ['-1'],
    ['1e1'],
    ['0x10'],
    ['abc'],
    [''],
    ['9007199254740991'],
    ['100000000000000000001'],
  ])('on a limit: %j', async (limit) => {
    const res = await call(listPets, apiEvent('GET', `/pets?${new URLSearchParams({ limit })}`));
    expectAgreement(parameterAccepts('limit', limit), res.status, [200]);
  });

  it.each([[['5', '500']], [['500', '5']], [['5', 'abc']], [['abc', '5']]])(
    'on a repeated limit, by its last value: %j',
    async (limits) => {
      const query = new URLSearchParams(limits.map((limit): [string, string] => ['limit', limit]));
      const res = await call(listPets, apiEvent('GET', `/pets?${query}`));
      expectAgreement(parameterAccepts('limit', limits.at(-1)!), res.status, [200]);
    },
  );

  it.each([['available'], ['sold'], ['Sold'], [''], [' sold'], ['lost']])(
    'on a status parameter: %j',
    async (status) => {
      const res = await call(listPets, apiEvent('GET', `/pets?${new URLSearchParams({ status })}`));
      expectAgreement(parameterAccepts('status', status), res.status, [200]);
    },
  );

  it.each([
    ['a stored id'],
    ['1'],
    ['0'],
    ['-1'],
    ['01'],
    [' 1'],
    ['1 '],
    ['1.0'],
    ['+1'],
    ['1e3'],
    ['0x10'],
    ['abc'],
    ['%31'],
    ['9007199254740991'],
    ['9007199254740992'],
    ['12345678901234567890'],
    ['-0'],
    ['-01'],
    ['-259'],
    ['9223372036854775807'],
    ['9223372036854775808'],
    ['-9223372036854775808'],
    ['-9223372036854775809'],
  ])('on a petId: %j', async (given) => {
    const petId = given === 'a stored id' ? String(storedId) : given;
    const event = apiEvent('GET', '/pets/1', { route: routeOf('getPet') });
    event.pathParameters = { petId };
    const res = await call(getPet, event);
    expectAgreement(parameterAccepts('petId', petId), res.status, [200, 404]);
  });

  /** Spellings of the cursor the service gave: each decodes (leniently) to the same bytes. */
  const spellings: [string, (cursor: string) => string][] = [
    ['as given', (cursor) => cursor],
    ['with = padding', (cursor) => eachPart(cursor, padded)],
    ['with = padding on its signature', (cursor) => eachPart(cursor, (part, i) => (i === 1 ? padded(part) : part))],
    [
      'with its signature in the +/ alphabet',
      (cursor) => eachPart(cursor, (part, i) => (i === 1 ? part.replaceAll('-', '+').replaceAll('_', '/') : part)),
    ],
    ['with a character outside the alphabet after it', (cursor) => `${cursor}!`],
    ['with a character outside the alphabet in its signature', (cursor) => cursor.replace('.', '.~')],
    ['with a space after', (cursor) => `${cursor} `],
    [
      "with the unused bits of its signature's last character set",
      (cursor) => eachPart(cursor, (part, i) => (i === 1 ? withLowBitsSet(part) : part)),
    ],
    [
      "with the unused bits of its body's last character set",
      (cursor) => eachPart(cursor, (part, i) => (i === 0 ? withLowBitsSet(part) : part)),
    ],
  ];

  it.each(spellings)('on a cursor the service gave, %s', async (_case, spell) => {
    const cursor = spell(genuineCursor);
    const res = await call(listPets, apiEvent('GET', `/pets?${new URLSearchParams({ limit: '1', cursor })}`));
    expectAgreement(parameterAccepts('cursor', cursor), res.status, [200]);
  });

  it('every spelling above differs from the cursor the service gave, which has characters of both alphabets to change', () => {
    const spelled = spellings.slice(1).map(([, spell]) => spell(genuineCursor));
    expect(new Set([genuineCursor, ...spelled]).size).toBe(spellings.length);
  });

  it("on an empty cursor, and on a cursor the schema accepts but the service never gave (the signature's 400)", async () => {
    const empty = await call(listPets, apiEvent('GET', '/pets?cursor='));
    expectAgreement(parameterAccepts('cursor', ''), empty.status, [200]);
    const [body, signature] = genuineCursor.split('.') as [string, string];
    const forged = `${body}.${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
    expect(parameterAccepts('cursor', forged)).toBe(true);
    expect((await call(listPets, apiEvent('GET', `/pets?${new URLSearchParams({ cursor: forged })}`))).status).toBe(
      400,
    );
  });
});

async function expectBodyAgreement(body: Record<string, unknown>) {
  const res = await call(createPet, apiEvent('POST', '/pets', { body }));
  expectAgreement(newPetAccepts(body), res.status, [201]);
  if (res.status === 201) expect(res.body.name).toBe(body.name);
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const eachPart = (cursor: string, respell: (part: string, index: number) => string): string =>
  cursor.split('.').map(respell).join('.');

const padded = (part: string): string => part + '='.repeat((4 - (part.length % 4)) % 4);

/** The same bytes, spelled with the bits a last character of 2 or 3 in its group leaves unused set to 1. */
function withLowBitsSet(part: string): string {
  const unusedBits = { 2: 0b1111, 3: 0b11 }[(part.length % 4) as 2 | 3];
  if (unusedBits === undefined) throw new Error(`a ${part.length}-character part has no unused bits`);
  const last = BASE64URL.indexOf(part.at(-1)!);
  return part.slice(0, -1) + BASE64URL[last | unusedBits];
}
