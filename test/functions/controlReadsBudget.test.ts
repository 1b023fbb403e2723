/**
 * Reads of the control table that a request waits for (the API keys, the cursor secret) stay within
 * the request's store budget when the table hangs: each waiting request gets its 503 at its own
 * deadline, also when it joined a read that an earlier request started. The bound is the budget plus
 * slack for a loaded machine (as in injectedFaults.test.ts), with the budget set to 1 s so that the
 * DynamoDB client's own give-up time (3 attempts of 1 s) lies well beyond it.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { createHandler as getPetHandler } from '../../functions/getPet.ts';
import { createHandler as listPetsHandler } from '../../functions/listPets.ts';
import { CursorCodec, fixedSecret } from '../../lib/domain/pagination.ts';
import { dependenciesFromEnvironment, type Environment } from '../../lib/service.ts';
import { apiEvent, call } from '../support/events.ts';
import { useFaultProxy } from '../support/faultProxy.ts';
import { TEST_API_KEY, freshEnvironment, useEmbeddedStore } from '../support/store.ts';

const BUDGET_MS = 1_000;
/** Slack for two busy cores; the client alone would take about 3.1 s to give up on a hang. */
const ANSWER_BOUND_MS = BUDGET_MS + 1_200;

const endpoint = useEmbeddedStore();
const proxy = useFaultProxy(endpoint);
let env: Environment;
beforeEach(async () => {
  env = await freshEnvironment(proxy().endpoint, { STORE_BUDGET_MS: String(BUDGET_MS) });
});

async function timed(work: Promise<{ status: number }>): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  const { status } = await work;
  return { status, ms: Date.now() - started };
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('with the control table hung', () => {
  it('answers 503 within the budget when the API keys cannot be read, for a request that joins a read already waiting too', async () => {
    const { PETSTORE_API_KEYS: _local, ...deployed } = env;
    const handler = getPetHandler(dependenciesFromEnvironment(deployed));
    proxy().fault = { kind: 'hang', operations: ['Query'], bodyIncludes: env.CONTROL_TABLE_NAME! };
    const first = timed(call(handler, apiEvent('GET', '/pets/1')));
    await sleep(BUDGET_MS * 0.6);
    // Joins the read `first` started, with a later deadline of its own.
    const second = timed(call(handler, apiEvent('GET', '/pets/1')));
    for (const answer of await Promise.all([first, second])) {
      expect(answer.status).toBe(503);
      expect(answer.ms).toBeGreaterThanOrEqual(BUDGET_MS - 50);
      expect(answer.ms).toBeLessThan(ANSWER_BOUND_MS);
    }
    // The store back: the next request reads the keys (a read started after the hang) and is answered (401: the test key is not among the control table's keys).
    proxy().fault = undefined;
    await sleep(3_500);
    const authorized = await call(
      handler,
      apiEvent('GET', '/pets/1', { anonymous: true, headers: { Authorization: `Bearer ${TEST_API_KEY}` } }),
    );
    expect(authorized.status).toBe(401);
  });

  it('answers 503 within the budget when the cursor secret cannot be read', async () => {
    const { PETSTORE_CURSOR_SECRET: _local, ...deployed } = env;
    const handler = listPetsHandler(dependenciesFromEnvironment(deployed));
    const cursor = await new CursorCodec(fixedSecret('any-secret-of-16-bytes-or-more')).encode(1, undefined);
    proxy().fault = { kind: 'hang', operations: ['GetItem'], bodyIncludes: env.CONTROL_TABLE_NAME! };
    const answer = await timed(call(handler, apiEvent('GET', `/pets?cursor=${cursor}`)));
    expect(answer.status).toBe(503);
    expect(answer.ms).toBeLessThan(ANSWER_BOUND_MS);
  });
});
