/**
 * A createPet body in a content coding (gzip, br...) over real HTTP: the local API and the staging
 * stage run as deployed answer alike, 415 with `Accept-Encoding: identity` (RFC 7694 section 3), from
 * the function, and store nothing. Every answer is checked against openapi.json on the way (fetchApi).
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalApi } from '../../local/server.ts';
import { startStage, type RunningStage } from '../support/deployedStage.ts';
import { fetchApi } from '../support/http.ts';
import { startTestApi } from '../support/localApi.ts';
import { TEST_API_KEY } from '../support/store.ts';

interface Front {
  url: string;
  key: string;
  close(): Promise<void>;
}

const fronts: [string, () => Promise<Front>][] = [
  ['the local API', async () => withKey(await startTestApi(TEST_API_KEY), TEST_API_KEY)],
  [
    'the staging stage run as deployed',
    async () => {
      const running: RunningStage = await startStage('staging');
      return { url: running.api.url, key: running.key, close: () => running.close() };
    },
  ],
];

const withKey = (api: LocalApi, key: string): Front => ({ url: api.url, key, close: () => api.close() });

describe.each(fronts)('%s', (_front, start) => {
  let front: Front;
  beforeAll(async () => {
    front = await start();
  }, 240_000);
  afterAll(() => front?.close());

  const post = (body: Uint8Array | string, headers: Record<string, string>) =>
    fetchApi(`${front.url}/pets`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${front.key}`, 'Content-Type': 'application/json', ...headers },
      body,
    });

  it.each([['gzip'], ['br']])(
    'answers a body sent with Content-Encoding: %s 415 with Accept-Encoding: identity',
    async (coding) => {
      const res = await post(gzipSync(JSON.stringify({ name: 'Rex', categoryId: 1 })), { 'Content-Encoding': coding });
      expect(res.status).toBe(415);
      expect(res.body).toEqual({
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: expect.stringMatching(/Content-Encoding/),
        status: 415,
      });
      expect(res.headers.get('accept-encoding')).toBe('identity');
      expect(res.headers.get('x-request-id')).toBeTruthy();
      const list = await fetchApi(`${front.url}/pets`, { headers: { Authorization: `Bearer ${front.key}` } });
      expect(list.body).toEqual([]);
    },
  );

  it('takes the same pet sent with Content-Encoding: identity', async () => {
    const res = await post(JSON.stringify({ name: 'Rex', categoryId: 1 }), { 'Content-Encoding': 'identity' });
    expect(res.status).toBe(201);
  });
});
