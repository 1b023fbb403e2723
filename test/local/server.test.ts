import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalApi } from '../../local/server.ts';
import { startTestApi } from '../support/localApi.ts';
import { fetchApi } from '../support/http.ts';
import { rawExchange } from '../support/rawHttp.ts';
import { BODY_REFUSALS } from '../../lib/http/bodyLimits.ts';

const KEY = 'local-api-test-key';
let api: LocalApi;

beforeAll(async () => {
  api = await startTestApi(KEY);
});
afterAll(async () => {
  await api?.close();
});

const auth = { Authorization: `Bearer ${KEY}` };
const json = { ...auth, 'Content-Type': 'application/json' };

const request = (path: string, init: RequestInit = {}) => fetchApi(`${api.url}${path}`, init);

const createPet = (pet: unknown) => request('/pets', { method: 'POST', headers: json, body: JSON.stringify(pet) });

describe('local API over HTTP', () => {
  it('serves under /v1 on loopback', () => {
    expect(api.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });

  it('gives every answer an id: X-Request-Id, and on a refused key x-amzn-RequestId alone, as the gateway response on AWS', async () => {
    const created = await createPet({ name: 'Rex', categoryId: 1 });
    const unknownPath = await request('/nothing-here', { headers: auth });
    const unauthenticated = await request('/pets');
    expect(unauthenticated.headers.get('x-request-id')).toBeNull();
    expect(unauthenticated.headers.get('x-amzn-errortype')).toBe('UnauthorizedException');
    const ids = [created, unknownPath]
      .map((res) => res.headers.get('x-request-id'))
      .concat(unauthenticated.headers.get('x-amzn-requestid'));
    expect([created.status, unknownPath.status, unauthenticated.status]).toEqual([201, 404, 401]);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(ids).size).toBe(3);
  });

  it('creates, lists and gets a pet', async () => {
    const created = await createPet({ name: 'Rex', categoryId: 1, status: 'pending' });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/v1/pets/${created.body.id}`);
    const listed = await request('/pets?status=pending', { headers: auth });
    expect(listed.body).toContainEqual(created.body);
    const fetched = await request(`/pets/${created.body.id}`, { headers: auth });
    expect(fetched.body).toEqual(created.body);
    expect(fetched.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
  });

  it('gives next links that work when followed as they are', async () => {
    for (let i = 0; i < 5; i++) await createPet({ name: `Page ${i}`, categoryId: 2, status: 'sold' });
    const seen: number[] = [];
    let next: string | undefined = `${api.url}/pets?status=sold&limit=2`;
    while (next) {
      const res = await fetchApi(next, { headers: auth });
      seen.push(...(res.body as { id: number }[]).map((pet) => pet.id));
      next = /^<([^>]+)>; rel="next"$/.exec(res.headers.get('link') ?? '')?.[1];
      if (next) expect(next.startsWith(`${api.url}/pets?limit=2&status=sold&cursor=`)).toBe(true);
    }
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
  });

  it.each([
    ['/', 'GET'],
    ['/pets', 'GET'],
    ['/v2/pets', 'GET'],
    ['/v1', 'GET'],
    ['/v1/', 'GET'],
    ['/v1/orders', 'GET'],
    ['/v1/pets/1/photos', 'GET'],
  ])('answers 404 NOT_FOUND for %s', async (path, method) => {
    const res = await fetchApi(new URL(path, api.url), { method, headers: auth });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'NOT_FOUND', message: expect.any(String), status: 404 });
  });

  it('answers GET / with a 404 that points at the docs and the base path', async () => {
    const res = await fetchApi(new URL('/', api.url));
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect((res.body as { message: string }).message).toMatch(/under \/v1 .*documentation is at \/docs/);
    const docs = await fetch(new URL('/docs', api.url));
    expect(docs.status).toBe(200);
    await docs.text();
  });

  it.each([
    ['/pets', 'DELETE', 'GET, POST'],
    ['/pets', 'PUT', 'GET, POST'],
    ['/pets/1', 'POST', 'GET'],
    ['/pets/1', 'DELETE', 'GET'],
    ['/pets/1', 'PATCH', 'GET'],
  ])('answers 405 with Allow for %s %s', async (path, method, allow) => {
    const res = await request(path, { method, headers: auth });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    expect(res.body).toEqual({ code: 'METHOD_NOT_ALLOWED', message: expect.any(String), status: 405 });
  });

  it('answers errors with the Error body and no stack trace', async () => {
    const res = await request('/pets', { method: 'POST', headers: json, body: '{"name":' });
    expect(res.body).toEqual({ code: 'VALIDATION_FAILED', message: expect.any(String), status: 400 });
    expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts|SyntaxError/);
  });

  it('answers 401 with a challenge before any other check', async () => {
    const res = await request('/pets?limit=0');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="petstore"');
  });

  it('passes multi-value query strings and headers as API Gateway does (the last value wins)', async () => {
    const res = await request('/pets?limit=0&limit=1', { headers: auth });
    expect(res.status).toBe(200);
    expect(res.body.length).toBeLessThanOrEqual(1);
  });

  it('answers 413 for a body over the limit, and stores nothing', async () => {
    const before = (await request('/pets?limit=100', { headers: auth })).body.length;
    const res = await request('/pets', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: 'x'.repeat(20_000), categoryId: 1 }),
    });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
    expect((await request('/pets?limit=100', { headers: auth })).body.length).toBe(before);
  });

  it('refuses a body by its size before reading it or checking the key, as the production web ACL does', async () => {
    const port = Number(new URL(api.url).port);
    // 5 MB announced, none of it sent, and no key: the answer comes without waiting for the body.
    const big = await rawExchange(
      port,
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n`,
    );
    expect(big.status).toBe(413);
    expect(JSON.parse(big.body)).toEqual({
      code: 'PAYLOAD_TOO_LARGE',
      message: BODY_REFUSALS.PayloadTooLarge.message,
      status: 413,
    });
    const withBodyOnGet = await rawExchange(port, `GET /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}`);
    expect(withBodyOnGet.status).toBe(400);
    expect(JSON.parse(withBodyOnGet.body)).toMatchObject({
      code: 'VALIDATION_FAILED',
      message: BODY_REFUSALS.BodyOnGet.message,
    });
    expect(withBodyOnGet.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('decodes percent-encoded path parameters', async () => {
    const res = await request('/pets/%31', { headers: auth });
    expect([200, 404]).toContain(res.status);
    expect((await request('/pets/%2F', { headers: auth })).status).toBe(400);
  });
});

describe('CORS by default (no origins configured)', () => {
  it('adds no CORS header and answers OPTIONS 405 like any other method', async () => {
    const res = await request('/pets', { headers: { ...auth, Origin: 'https://app.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await request('/pets', {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' },
    });
    expect(preflight.status).toBe(405);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });
});
