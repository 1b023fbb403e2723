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
import { ANSWER_MARGIN_MS } from '../../lib/store/deadline.ts';
import { dependenciesFromEnvironment, type Environment } from '../../lib/service.ts';
import { apiEvent, call } from '../support/events.ts';
import { useFaultProxy } from '../support/faultProxy.ts';
import { TEST_API_KEY, freshEnvironment, useEmbeddedStore } from '../support/store.ts';

const BUDGET_MS = 1_000;
/** The first request's budget: its Lambda has less time left than the second's. */
const FIRST_BUDGET_MS = 400;
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

describe('with the control table hung', () => {
  it('answers 503 within the budget when the API keys cannot be read, for a request that joins a read already waiting too', async () => {
    const { PETSTORE_API_KEYS: _local, ...deployed } = env;
    const handler = getPetHandler(dependenciesFromEnvironment(deployed));
    proxy().fault = { kind: 'hang', operations: ['Query'], bodyIncludes: env.CONTROL_TABLE_NAME! };
    const keysRead = new Promise<void>((resolve) => {
      proxy().observe = (operation) => operation === 'Query' && resolve();
    });
    // The first with a Lambda nearly out of time: a store budget of FIRST_BUDGET_MS, not BUDGET_MS.
    const first = timed(call(handler, apiEvent('GET', '/pets/1'), ANSWER_MARGIN_MS + FIRST_BUDGET_MS));
    await keysRead;
    // Joins the read `first` started, with a later deadline of its own.
    const second = timed(call(handler, apiEvent('GET', '/pets/1')));
    const answers = await Promise.all([first, second]);
    answers.forEach((answer, i) => {
      expect(answer.status).toBe(503);
      expect(answer.ms).toBeGreaterThanOrEqual((i === 0 ? FIRST_BUDGET_MS : BUDGET_MS) - 50);
      expect(answer.ms).toBeLessThan(ANSWER_BOUND_MS);
    });
    // The store back: a request reads the keys and is answered (401: the test key is not among the
    // control table's keys), once the hung read has given up (503s until then, each at its deadline).
    proxy().fault = undefined;
    let status = 0;
    for (let attempt = 0; attempt < 5 && status !== 401; attempt++) {
      status = (
        await call(
          handler,
          apiEvent('GET', '/pets/1', { anonymous: true, headers: { Authorization: `Bearer ${TEST_API_KEY}` } }),
        )
      ).status;
      expect([401, 503]).toContain(status);
    }
    expect(status).toBe(401);
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
