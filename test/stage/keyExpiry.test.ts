/**
 * Keys that expire, and verdicts bound to their token, on the production stage run as deployed: an
 * expired key is refused 401 as an unknown key is, by the authorizer when it runs and by the
 * function when API Gateway replays a cached Allow, well within the revocation bound; a key's use is
 * recorded on its item by the authorizer, under its own role; a request with two Authorization
 * headers, and a verdict handed on with another token, are refused 401 by the function.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_KEY_LIFETIME_MS } from '../../lib/domain/keyLifetime.ts';
import { KEY_REVOCATION_BOUND_MS, keyItemKey } from '../../lib/store/controlTableKeys.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { fetchApi } from '../support/http.ts';
import { rawExchange } from '../support/rawHttp.ts';
import { API_KEY_FORMAT } from '../../tools/keys/keys.ts';
import type { DeployedFunction } from '../../tools/stage-emulator/src/deployedApi.ts';
import { issueKey, startStage, type RunningStage } from '../support/deployedStage.ts';

const STAGE = 'production';
/** How long after it is issued, last before the first request, the expiring key expires: time for one request. */
const EXPIRES_IN_MS = 5_000;
let running: RunningStage;
let expiring: { key: string; expiresAt: number };
let expired: string;
let other: string;

const fn = (name: RegExp): DeployedFunction => running.api.functions.find((f) => name.test(f.logicalId))!;
const authorizerRuns = () => fn(/^AuthorizerFunction/).host.invocations;
const get = (key: string, path = '/pets?limit=1') =>
  fetchApi(`${running.api.url}${path}`, { headers: { Authorization: `Bearer ${key}` } });

beforeAll(async () => {
  running = await startStage(STAGE);
  // Issued before any request (the authorizer keeps the keys it read for minutes): one expired
  // already, another valid one, and last one that expires EXPIRES_IN_MS from now.
  expired = await issueKey(STAGE, running.api, { createdAt: new Date(Date.now() - DEFAULT_KEY_LIFETIME_MS - 1_000) });
  other = await issueKey(STAGE, running.api);
  const created = Date.now() - DEFAULT_KEY_LIFETIME_MS + EXPIRES_IN_MS;
  expiring = {
    key: await issueKey(STAGE, running.api, { createdAt: new Date(created) }),
    expiresAt: created + DEFAULT_KEY_LIFETIME_MS,
  };
}, 240_000);
afterAll(() => running?.close());

describe('an expired key on the production stage run as deployed', () => {
  it('is refused by the function on the Allow API Gateway cached before it expired, within a second or two, far inside the revocation bound', async () => {
    expect(Date.now()).toBeLessThan(expiring.expiresAt);
    expect((await get(expiring.key)).status).toBe(200);
    const runs = authorizerRuns();
    // The expiry is an instant of the sandboxes' own wall clock, which no test clock moves: waited for as such.
    await new Promise((done) => setTimeout(done, Math.max(0, expiring.expiresAt - Date.now())));
    let refusedAt: number | undefined;
    while (refusedAt === undefined && Date.now() < expiring.expiresAt + 10_000) {
      const answer = await get(expiring.key);
      if (answer.status === 401) {
        expect(answer.body).toEqual({ code: 'UNAUTHORIZED', message: 'The API key is invalid.', status: 401 });
        refusedAt = Date.now();
      } else {
        expect(answer.status, 'accepted only before it expires').toBe(200);
        expect(Date.now()).toBeLessThan(expiring.expiresAt + 1_000);
      }
    }
    expect(refusedAt, 'never refused').toBeDefined();
    expect(refusedAt! - expiring.expiresAt).toBeLessThan(KEY_REVOCATION_BOUND_MS);
    expect(refusedAt! - expiring.expiresAt).toBeLessThan(3_000);
    // Every answer came from the cached Allow: the function refused it, not the authorizer.
    expect(authorizerRuns()).toBe(runs);
  }, 60_000);

  it('is refused by the authorizer when it runs: 401 UNAUTHORIZED, as an unknown key, and no operation runs', async () => {
    const operations = () =>
      running.api.functions
        .filter((f) => !/^Authorizer/.test(f.logicalId))
        .reduce((sum, f) => sum + f.host.invocations, 0);
    const before = operations();
    const answer = await get(expired);
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    expect(operations()).toBe(before);
  });

  it("records each key's last use on its item, through the authorizer's own role", async () => {
    const documents = createDocumentClient({ endpoint: running.api.storeEndpoint, region: 'us-east-1' });
    try {
      const keyId = API_KEY_FORMAT.exec(running.key)![1]!;
      expect((await get(running.key)).status).toBe(200);
      const { Item } = await documents.send(
        new GetCommand({
          TableName: running.api.output('ControlTableName'),
          Key: keyItemKey(keyId),
          ConsistentRead: true,
        }),
      );
      expect(Date.now() - Date.parse(String(Item?.lastUsedAt))).toBeLessThan(60_000);
      expect(running.api.iamReport().functions.find((f) => /^Authorizer/.test(f.function))!.denied).toBe(0);
    } finally {
      documents.destroy();
    }
  });
});

describe("a verdict is about this request's token only", () => {
  it('refuses 401 a request with two Authorization headers, even one API Gateway answers from a cached Allow', async () => {
    expect((await get(other)).status).toBe(200);
    const runs = authorizerRuns();
    const { port, pathname } = new URL(running.api.url);
    const answer = await rawExchange(
      Number(port),
      `GET ${pathname}/pets?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${running.key}\r\nAuthorization: Bearer ${other}\r\nConnection: close\r\n\r\n`,
    );
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toEqual({
      code: 'UNAUTHORIZED',
      message: 'Send one Authorization header, not several.',
      status: 401,
    });
    expect(authorizerRuns()).toBe(runs);
  });

  it('refuses 401 the verdict on one key handed on with another key, as a gateway that mixed them would', async () => {
    const getPet = fn(/^GetPetFunction/);
    let seen:
      | {
          headers: Record<string, string>;
          multiValueHeaders: Record<string, string[]>;
          requestContext: { authorizer?: Record<string, unknown> };
        }
      | undefined;
    const invoke = getPet.host.invoke.bind(getPet.host);
    getPet.host.invoke = (event) => {
      seen = event as typeof seen;
      return invoke(event);
    };
    try {
      expect((await get(running.key, '/pets/1')).status).toBe(404);
    } finally {
      getPet.host.invoke = invoke;
    }
    expect(seen?.requestContext.authorizer?.keyId).toBe(API_KEY_FORMAT.exec(running.key)![1]);
    const swapped = {
      ...seen!,
      headers: { ...seen!.headers, Authorization: `Bearer ${other}` },
      multiValueHeaders: { ...seen!.multiValueHeaders, Authorization: [`Bearer ${other}`] },
    };
    const outcome = await getPet.host.invoke(swapped);
    expect(outcome.kind).toBe('ok');
    const payload = (outcome as { payload: { statusCode: number; body: string } }).payload;
    expect(payload.statusCode).toBe(401);
    expect(JSON.parse(payload.body)).toMatchObject({ code: 'UNAUTHORIZED', message: 'The API key is invalid.' });
    // The same event with its own key is answered.
    expect(((await getPet.host.invoke(seen)) as { payload: { statusCode: number } }).payload.statusCode).toBe(404);
  });
});
