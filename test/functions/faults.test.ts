import { ProvisionedThroughputExceededException, ThrottlingException } from '@aws-sdk/client-dynamodb';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createHandler as createPetHandler } from '../../functions/createPet.ts';
import { createHandler as getPetHandler } from '../../functions/getPet.ts';
import { createHandler as listPetsHandler } from '../../functions/listPets.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { dependenciesFromEnvironment, type Environment, type Dependencies } from '../../lib/service.ts';
import { apiEvent, call } from '../support/events.ts';
import { freshEnvironment, useEmbeddedStore } from '../support/store.ts';

const endpoint = useEmbeddedStore();
let env: Environment;
beforeAll(async () => {
  env = await freshEnvironment(endpoint());
});

const requests = [
  ['listPets', listPetsHandler, () => apiEvent('GET', '/pets?status=sold')],
  ['listPets (scan)', listPetsHandler, () => apiEvent('GET', '/pets')],
  ['createPet', createPetHandler, () => apiEvent('POST', '/pets', { body: { name: 'Rex', categoryId: 1 } })],
  ['getPet', getPetHandler, () => apiEvent('GET', '/pets/1')],
] as const;

/** A service whose DynamoDB client fails every call with `error`: the one place a client is mocked. */
function failingService(error: unknown): Dependencies {
  const documents = createDocumentClient({ endpoint: env.DYNAMODB_ENDPOINT });
  vi.spyOn(documents, 'send').mockRejectedValue(error as never);
  const service = dependenciesFromEnvironment(env);
  return { ...service, pets: { ...service.pets, documents } };
}

const unavailable = {
  code: 'SERVICE_UNAVAILABLE',
  message: expect.any(String),
  status: 503,
  requestId: expect.any(String),
};
const meta = { $metadata: {}, message: 'slow down' };

describe.each(requests)('%s when the store fails', (_name, make, event) => {
  it.each<[string, unknown]>([
    ['throttled', new ThrottlingException(meta)],
    ['over provisioned throughput', new ProvisionedThroughputExceededException(meta)],
    ['timing out', Object.assign(new Error('socket timed out'), { name: 'TimeoutError' })],
    ['refusing connections', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })],
    [
      'answering 500',
      Object.assign(new Error('InternalServerError'), {
        name: 'InternalServerError',
        $metadata: { httpStatusCode: 500 },
      }),
    ],
  ])('answers 503 with Retry-After when %s', async (_case, error) => {
    const res = await call(make(failingService(error)), event());
    expect(res.status).toBe(503);
    expect(res.body).toEqual(unavailable);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.body.requestId).toBe(res.headers['x-request-id']);
  });

  it('answers 500 INTERNAL for anything unexpected, logged with the request id and never shown', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const lambdaEvent = event();
    const res = await call(make(failingService(new TypeError('secret internals at line 42'))), lambdaEvent);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      code: 'INTERNAL',
      message: expect.any(String),
      status: 500,
      requestId: lambdaEvent.requestContext.requestId,
    });
    expect(res.headers['x-request-id']).toBe(lambdaEvent.requestContext.requestId);
    expect(JSON.stringify(res.body)).not.toMatch(/secret internals|TypeError|at line/);
    const logged = JSON.parse(String(errors.mock.calls.at(-1)?.[0]));
    expect(logged).toMatchObject({
      level: 'ERROR',
      message: 'secret internals at line 42',
      requestId: lambdaEvent.requestContext.requestId,
    });
    expect(logged.awsRequestId).toEqual(expect.any(String));
    errors.mockRestore();
  });
});

describe('real store faults, without mocks', () => {
  it('answers 503 when the table does not exist', async () => {
    const service = dependenciesFromEnvironment({ ...env, TABLE_NAME: 'no-such-table' });
    const res = await call(listPetsHandler(service), apiEvent('GET', '/pets'));
    expect(res).toMatchObject({ status: 503, body: unavailable });
  });

  it('answers 503 when the store cannot be reached', async () => {
    const service = dependenciesFromEnvironment({ ...env, DYNAMODB_ENDPOINT: 'http://127.0.0.1:9' });
    const res = await call(
      createPetHandler(service),
      apiEvent('POST', '/pets', { body: { name: 'Rex', categoryId: 1 } }),
    );
    expect(res).toMatchObject({ status: 503, body: unavailable });
  });
});

describe('key store faults', () => {
  it.each(requests)('%s answers 503 when the API keys cannot be read', async (_name, make, event) => {
    const service = {
      ...dependenciesFromEnvironment(env),
      keys: { keyDigests: () => Promise.reject(new Error('the control table is down')) },
    };
    const res = await call(make(service), event());
    expect(res).toMatchObject({ status: 503, body: unavailable });
    expect(res.headers['retry-after']).toBe('1');
  });
});
