import { describe, expect, it } from 'vitest';
import { matchRoute, resourcePaths, routes } from '../../../lib/domain/routes.ts';
import { createTableInput, petsTable } from '../../../lib/store/table.ts';
import { existsSync } from 'node:fs';

describe('routes', () => {
  it('lists the three operations of the spec, each with a handler module', () => {
    expect(routes.map((r) => `${r.method} ${r.path} ${r.operation}`)).toEqual([
      'GET /pets listPets',
      'POST /pets createPet',
      'GET /pets/{petId} getPet',
    ]);
    for (const route of routes) expect(existsSync(route.entry)).toBe(true);
  });

  it('matches literal paths and path parameters', () => {
    expect(matchRoute('GET', '/pets')).toMatchObject({ kind: 'found', route: { operation: 'listPets' } });
    expect(matchRoute('POST', '/pets')).toMatchObject({ kind: 'found', route: { operation: 'createPet' } });
    expect(matchRoute('GET', '/pets/42')).toMatchObject({ kind: 'found', pathParameters: { petId: '42' } });
  });

  it('tells 405 from 404', () => {
    expect(matchRoute('DELETE', '/pets/42')).toEqual({ kind: 'methodNotAllowed', allow: ['GET'] });
    expect(matchRoute('PUT', '/pets')).toEqual({ kind: 'methodNotAllowed', allow: ['GET', 'POST'] });
    for (const path of ['/', '/pet', '/pets/', '/pets/1/2', '/orders'])
      expect(matchRoute('GET', path)).toEqual({ kind: 'notFound' });
  });

  it('groups methods by resource', () => {
    expect(Object.fromEntries(resourcePaths())).toEqual({ '/pets': ['GET', 'POST'], '/pets/{petId}': ['GET'] });
  });

  it('marks only getPet deprecated, with the spec sunset', () => {
    expect(routes.filter((r) => r.deprecated).map((r) => [r.operation, r.deprecated?.sunset])).toEqual([
      ['getPet', '2030-12-05T00:00:00Z'],
    ]);
  });
});

describe('table definition', () => {
  it('keys pets by numeric id, with a status index sorted by id', () => {
    const input = createTableInput('t');
    expect(input.KeySchema).toEqual([{ AttributeName: 'id', KeyType: 'HASH' }]);
    expect(input.GlobalSecondaryIndexes?.[0]).toEqual({
      IndexName: 'status-index',
      KeySchema: [
        { AttributeName: 'statusShard', KeyType: 'HASH' },
        { AttributeName: 'id', KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'ALL' },
    });
    expect(petsTable.partitionKey).toEqual({ name: 'id', type: 'N' });
  });
});
