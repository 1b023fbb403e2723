/**
 * The stage run as deployed (staging, from its cloud assembly): every kind of answer carries
 * `Cache-Control: no-store` and `X-Content-Type-Options: nosniff`: a function's (through its
 * bundle), a gateway response (the key authorizer's 401 to a missing key, as API Gateway renders the
 * template's GatewayResponse), a mock method's (404, 405), and the runner's answer at its HTTP edge.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startStage, type RunningStage } from '../support/deployedStage.ts';
import { rawExchange } from '../support/rawHttp.ts';

let stage: RunningStage;
beforeAll(async () => {
  stage = await startStage('staging');
}, 120_000);
afterAll(async () => {
  await stage?.close();
});

const hardened = (headers: Headers | Record<string, string>) => {
  const get = (name: string) => (headers instanceof Headers ? headers.get(name) : headers[name]);
  return { cacheControl: get('cache-control'), contentTypeOptions: get('x-content-type-options') };
};
const EXPECTED = { cacheControl: 'no-store', contentTypeOptions: 'nosniff' };

it.each([
  ['a function answer', '/v1/pets', 'GET', true, 200],
  ['a gateway response: the key authorizer refusing a missing key', '/v1/pets', 'GET', false, 401],
  ['a mock method: an unknown path', '/v1/nope', 'GET', true, 404],
  ['a mock method: a method a route lacks', '/v1/pets', 'DELETE', true, 405],
] as const)('%s carries them', async (_name, path, method, withKey, status) => {
  const headers: Record<string, string> = withKey ? { Authorization: `Bearer ${stage.key}` } : {};
  const response = await fetch(new URL(path, stage.api.url), { method, headers });
  await response.arrayBuffer();
  expect(response.status).toBe(status);
  expect(hardened(response.headers)).toEqual(EXPECTED);
});

it("the runner's answer at its HTTP edge (HTTP/1.1 without Host) carries them", async () => {
  const answer = await rawExchange(Number(new URL(stage.api.url).port), 'GET /v1/pets HTTP/1.1\r\n\r\n');
  expect(answer.status).toBe(400);
  expect(hardened(answer.headers)).toEqual(EXPECTED);
});
