/**
 * A header sent more than once, in any mix of cases, reaches the authorizer as API Gateway gives
 * it (HTTP field names are case-insensitive; the single-value `headers` holds the last value,
 * `multiValueHeaders` all of them): the value that names the authorizer's cache entry is the value
 * its event carries, so an Allow can never be cached under a token nobody checked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawExchange } from '../support/rawHttp.ts';
import { startStage, type RunningStage } from '../support/deployedStage.ts';

let stage: RunningStage;
let port: number;
beforeAll(async () => {
  stage = await startStage('staging');
  port = Number(new URL(stage.api.url).port);
});
afterAll(() => stage?.close());

const get = (headers: [string, string][]) =>
  rawExchange(
    port,
    `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${headers.map(([name, value]) => `${name}: ${value}\r\n`).join('')}Connection: close\r\n\r\n`,
  );

describe('repeated Authorization headers on the stage as deployed', () => {
  it('a valid key between two made-up ones, in mixed case, is refused, and the last made-up one stays refused alone', async () => {
    expect((await get([['Authorization', `Bearer ${stage.key}`]])).status).toBe(200);
    const mixed = await get([
      ['authorization', 'Bearer zz'],
      ['Authorization', `Bearer ${stage.key}`],
      ['authorization', 'Bearer made-up-1'],
    ]);
    expect(mixed.status).toBe(401);
    const alone = await get([['Authorization', 'Bearer made-up-1']]);
    expect(alone.status).toBe(401);
    const created = await rawExchange(
      port,
      `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer made-up-1\r\nContent-Type: application/json\r\nContent-Length: 27\r\nConnection: close\r\n\r\n{"name":"X","categoryId":1}`,
    );
    expect(created.status).toBe(401);
  });

  it('a made-up key before the valid one, in another case: the last value decides the cache entry and the event alike', async () => {
    const answer = await get([
      ['AUTHORIZATION', 'Bearer made-up-2'],
      ['authorization', `Bearer ${stage.key}`],
    ]);
    // Whatever the function then makes of two values, the made-up key must not be cached as allowed.
    expect([200, 401]).toContain(answer.status);
    expect((await get([['Authorization', 'Bearer made-up-2']])).status).toBe(401);
  });
});
