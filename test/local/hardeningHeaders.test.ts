/**
 * Every answer of the local API carries `Cache-Control: no-store` and `X-Content-Type-Options:
 * nosniff`, as the deployed API's do: a function's answer, the key refusal answered as the gateway
 * would, its own 404 and 405, a CORS preflight, /docs and its assets, /openapi.json, and the answers
 * at its HTTP edges (a request without Host, one the parser refuses, written on the raw socket).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalApi } from '../../local/server.ts';
import { startTestApi } from '../support/localApi.ts';
import { PARSER_EDGE_REQUESTS, rawExchange } from '../support/rawHttp.ts';

const KEY = 'hardening-headers-test-key';
const ORIGIN = 'https://app.example';
let api: LocalApi;
let port: number;
beforeAll(async () => {
  api = await startTestApi(KEY, { CORS_ALLOWED_ORIGINS: ORIGIN });
  port = Number(new URL(api.url).port);
});
afterAll(async () => {
  await api?.close();
  delete process.env.CORS_ALLOWED_ORIGINS;
});

const authorized = { Authorization: `Bearer ${KEY}` };
const REQUESTS: [name: string, path: string, init: RequestInit, status: number][] = [
  ['a function answer', '/v1/pets', { headers: authorized }, 200],
  ['a refused key (the gateway response)', '/v1/pets', {}, 401],
  ['an unknown path', '/v1/nope', { headers: authorized }, 404],
  ['a method a route lacks', '/v1/pets', { method: 'DELETE', headers: authorized }, 405],
  ['a CORS preflight', '/v1/pets', { method: 'OPTIONS', headers: { Origin: ORIGIN } }, 204],
  ['the docs page', '/docs', {}, 200],
  ['a docs asset', '/docs/swagger-ui.css', {}, 200],
  ['the OpenAPI document', '/openapi.json', {}, 200],
];

describe('every answer of the local API carries no-store and nosniff', () => {
  it.each(REQUESTS)('%s', async (_name, path, init, status) => {
    const response = await fetch(new URL(path, api.url), init);
    await response.arrayBuffer();
    expect(response.status).toBe(status);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it.each(PARSER_EDGE_REQUESTS.map(([name, request, status]) => [name, request, status] as const))(
    'at its HTTP edge: %s',
    async (_name, request, status) => {
      const answer = await rawExchange(port, request);
      expect(answer.status).toBe(status);
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
    },
  );
});
