/** CORS on the local API with allowed origins configured (CORS_ALLOWED_ORIGINS), and answers to others. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalApi } from '../../local/server.ts';
import { startTestApi } from '../support/localApi.ts';
import { fetchApi } from '../support/http.ts';

const KEY = 'cors-test-key';
const APP = 'https://app.example';
let api: LocalApi;

beforeAll(async () => {
  api = await startTestApi(KEY, { CORS_ALLOWED_ORIGINS: `${APP}, https://admin.example` });
});
afterAll(async () => {
  await api?.close();
  delete process.env.CORS_ALLOWED_ORIGINS;
});

describe('CORS with allowed origins', () => {
  it('answers a preflight from an allowed origin with 204 and the allowed methods and headers', async () => {
    const res = await fetch(`${api.url}/pets`, {
      method: 'OPTIONS',
      headers: {
        Origin: APP,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization,content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST');
    expect(res.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type, Idempotency-Key');
  });

  it('gives no Allow-Origin to a preflight from another origin', async () => {
    const res = await fetch(`${api.url}/pets/1`, { method: 'OPTIONS', headers: { Origin: 'https://evil.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('names an allowed origin on real answers, errors included, and exposes the API headers', async () => {
    const ok = await fetchApi(`${api.url}/pets`, { headers: { Origin: APP, Authorization: `Bearer ${KEY}` } });
    expect(ok.headers.get('access-control-allow-origin')).toBe(APP);
    expect(ok.headers.get('access-control-expose-headers')).toContain('Link');
    const denied = await fetchApi(`${api.url}/pets`, { headers: { Origin: APP } });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('access-control-allow-origin')).toBe(APP);
    const other = await fetchApi(`${api.url}/pets`, {
      headers: { Origin: 'https://evil.example', Authorization: `Bearer ${KEY}` },
    });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});
