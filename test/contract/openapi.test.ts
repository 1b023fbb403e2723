import { Validator } from '@seriousme/openapi-schema-validator';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLIENT_TYPES_FILE, OPENAPI_FILE } from '../../contract/files.ts';
import { openApiDocument, openApiText, UNROUTED_RESPONSES } from '../../contract/openapi.ts';
import { clientTypesText } from '../../tools/openapi-types/generate.ts';
import { assertDocumented, headerOf, type ReceivedResponse } from '../support/contract.ts';

const committed = readFileSync(OPENAPI_FILE, 'utf8');
const doc = openApiDocument() as any;

describe('openapi.json', () => {
  it('is what `npm run openapi` generates from the code (run it after changing routes, schemas or errors)', () => {
    expect(committed).toBe(openApiText());
  });

  it('client/src/schema.ts is generated from it (run `npm run openapi`)', async () => {
    expect(readFileSync(CLIENT_TYPES_FILE, 'utf8')).toBe(await clientTypesText(committed));
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(JSON.parse(committed));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('has both stages as templated servers ending in /v1, and bearer security on every operation', () => {
    expect(doc.servers.map((s: any) => s.description.split(' ')[0])).toEqual(['production', 'staging']);
    for (const server of doc.servers) {
      expect(server.url).toMatch(/^https:\/\/\{apiId\}\.execute-api\.\{region\}\.amazonaws\.com\/v1$/);
      expect(Object.keys(server.variables)).toEqual(['apiId', 'region']);
    }
    const operations = Object.values(doc.paths).flatMap((item: any) => Object.values(item)) as any[];
    expect(operations.map((op) => op.operationId).sort()).toEqual(['createPet', 'getPet', 'listPets']);
    for (const op of operations) expect(op.security).toEqual([{ bearer: [] }]);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('states limit with its bounds and default', () => {
    expect(doc.components.parameters.limit.schema).toEqual({
      type: 'integer',
      format: 'int64',
      minimum: 1,
      maximum: 100,
      default: 20,
    });
    // How a client writes it in the query: as JSON writes an integer.
    expect(doc.components.parameters.limit['x-text-pattern']).toBe('^-?(0|[1-9][0-9]*)$');
  });

  it("states petId as the spec's int64, whole: an id no pet has is a 404, not a 400", () => {
    expect(doc.components.parameters.petId.schema).toEqual({ type: 'integer', format: 'int64' });
    expect(doc.components.parameters.petId['x-text-pattern']).toBe('^-?(0|[1-9][0-9]*)$');
    expect(Object.keys(doc.paths['/pets/{petId}'].get.responses)).toEqual(expect.arrayContaining(['400', '404']));
  });

  it('marks getPet deprecated with its sunset and successor, on every answer', () => {
    const getPet = doc.paths['/pets/{petId}'].get;
    expect(getPet.deprecated).toBe(true);
    expect(getPet['x-sunset']).toBe('2030-12-05T00:00:00Z');
    expect(getPet['x-successor']).toBe('GET /v1/pets');
    for (const status of ['200', '400', '404', '410', '500']) {
      for (const header of ['Deprecation', 'Sunset', 'Link'])
        expect(headerOf(getPet.responses[status].headers[header]).required).toBe(true);
    }
    // 401 and 503 may come from the key authorizer's gateway responses, which are the API's, not the route's.
    for (const status of ['401', '503']) {
      for (const header of ['Deprecation', 'Sunset', 'Link'])
        expect(headerOf(getPet.responses[status].headers[header]).required).not.toBe(true);
    }
  });

  it('declares every response header the service sends', () => {
    const responses = [
      ...Object.values(doc.paths).flatMap((item: any) =>
        Object.values(item).flatMap((op: any) => Object.values(op.responses)),
      ),
      ...Object.values(doc[UNROUTED_RESPONSES]),
    ] as any[];
    const names = new Set(responses.flatMap((response) => Object.keys(response.headers ?? {})));
    expect([...names].sort()).toEqual(
      [
        'Accept-Encoding',
        'Allow',
        'Deprecation',
        'Idempotent-Replayed',
        'Link',
        'Location',
        'Retry-After',
        'Sunset',
        'WWW-Authenticate',
        'X-Request-Id',
        'x-amzn-Remapped-WWW-Authenticate',
      ].sort(),
    );
    const createPet = doc.paths['/pets'].post;
    const required = (response: any, name: string) => headerOf(response.headers[name]).required;
    expect(required(createPet.responses['201'], 'Location')).toBe(true);
    expect(required(createPet.responses['201'], 'Idempotent-Replayed')).toBeUndefined();
    // Only a 415 for the body's content coding carries it, not one for its media type.
    expect(required(createPet.responses['415'], 'Accept-Encoding')).toBeUndefined();
    // Either name, never both required: API Gateway renames the function's challenge (test/support/contract.ts checks one is there).
    expect(required(createPet.responses['401'], 'WWW-Authenticate')).toBeUndefined();
    expect(required(createPet.responses['401'], 'x-amzn-Remapped-WWW-Authenticate')).toBeUndefined();
    expect(required(createPet.responses['503'], 'Retry-After')).toBe(true);
    expect(required(createPet.responses['429'], 'Retry-After')).toBe(true);
    expect(required(createPet.responses['429'], 'X-Request-Id')).toBeUndefined(); // API Gateway's own answer
    expect(required(doc.paths['/pets'].get.responses['200'], 'Link')).toBeUndefined();
    expect(required(doc[UNROUTED_RESPONSES]['405'], 'Allow')).toBe(true);
  });

  it('states "required" only where OpenAPI 3.1 reads it: never beside a $ref', () => {
    const siblings: string[] = [];
    const visit = (node: unknown, at: string): void => {
      if (typeof node !== 'object' || node === null) return;
      if ('$ref' in node) {
        const extra = Object.keys(node).filter((key) => !['$ref', 'summary', 'description'].includes(key));
        if (extra.length) siblings.push(`${at}: ${extra.join(', ')}`);
      }
      for (const [key, value] of Object.entries(node)) visit(value, `${at}/${key}`);
    };
    visit(doc, '');
    expect(siblings).toEqual([]);
  });

  it('has no component nothing refers to', () => {
    const text = JSON.stringify(doc);
    const unused = Object.entries(doc.components)
      .filter(([kind]) => kind !== 'securitySchemes') // used by name in `security`, not by $ref
      .flatMap(([kind, entries]) => Object.keys(entries as object).map((name) => `#/components/${kind}/${name}`))
      .filter((pointer) => !text.includes(`"${pointer}"`));
    expect(unused).toEqual([]);
  });

  it('gives each error status the Error schema narrowed to its code', () => {
    const responses = doc.paths['/pets'].post.responses;
    expect(Object.keys(responses)).toEqual([
      '201',
      '400',
      '401',
      '403',
      '409',
      '410',
      '413',
      '415',
      '422',
      '429',
      '500',
      '502',
      '503',
      '504',
    ]);
    expect(responses['415'].content['application/json'].schema.allOf[1].properties).toEqual({
      code: { const: 'UNSUPPORTED_MEDIA_TYPE' },
      status: { const: 415 },
    });
  });
});

describe('response validation in test support', () => {
  const pet = { id: 1, name: 'Rex', categoryId: 1 };
  const json = { 'content-type': 'application/json' };

  it('accepts a documented answer', () => {
    expect(() =>
      assertDocumented('POST', '/pets', {
        status: 201,
        headers: { ...json, location: '/v1/pets/1', 'x-request-id': 'r-1' },
        body: pet,
      }),
    ).not.toThrow();
  });

  it.each([
    [
      'an undeclared status',
      'GET',
      '/pets',
      { status: 404, headers: json, body: { code: 'NOT_FOUND', message: 'x', status: 404 } },
    ],
    ['a missing required header', 'POST', '/pets', { status: 201, headers: json, body: pet }],
    ['a body off its schema', 'GET', '/pets', { status: 200, headers: json, body: [{ ...pet, extra: true }] }],
    [
      'an error code off its status',
      'GET',
      '/pets',
      { status: 400, headers: json, body: { code: 'NOT_FOUND', message: 'x', status: 400 } },
    ],
    [
      'a 405 without Allow',
      'DELETE',
      undefined,
      { status: 405, headers: json, body: { code: 'METHOD_NOT_ALLOWED', message: 'x', status: 405 } },
    ],
  ] as const)('rejects %s', (_, method, path, response) => {
    expect(() => assertDocumented(method, path, response as ReceivedResponse)).toThrow();
  });
});
