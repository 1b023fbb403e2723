/**
 * The metrics the stage run as deployed records for its alarms (tools/stage-emulator/src/alarms/recorders.ts),
 * from real requests: API Gateway's per stage and per method, Lambda's per function, DynamoDB's per
 * table and operation through the store proxy's faults, and the templates' metric filters on the
 * functions' log lines and the access log; each under the dimensions the alarms name. Last, every
 * metric an alarm of either template reads is one the recorders produce, but the WAF's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackName } from '../../infra/stages.ts';
import { DEFAULT_OUTDIR, STAGE_APP } from '../../local/stageApp.ts';
import { MetricStore, type MetricId } from '../../tools/stage-emulator/src/alarms/metricStore.ts';
import { unrecordedAlarmMetrics } from '../../tools/stage-emulator/src/alarms/coverage.ts';
import { readStack, type CfnTemplate } from '../../tools/stage-emulator/src/cloudAssembly.ts';
import { ensureCloudAssembly } from '../../tools/stage-emulator/src/freshAssembly.ts';
import { DEPLOY_PARAMETERS, startStage, type RunningStage } from '../support/deployedStage.ts';
import { fetchApi } from '../support/http.ts';

const STAGE = 'production';
const NOW = Date.UTC(2025, 0, 1, 3, 0, 0);
const store = new MetricStore({ now: () => NOW });
let running: RunningStage;
let names: { listPets: string; createPet: string; getPet: string; authorizer: string; pets: string };

const values = (id: MetricId) => store.values(id, NOW, NOW + 1);
const sum = (id: MetricId) => values(id).reduce((total, value) => total + value, 0);
const api = (metricName: string, method?: { Resource: string; Method: string }): MetricId => ({
  namespace: 'AWS/ApiGateway',
  metricName,
  dimensions: { ApiName: `petstore-${STAGE}`, Stage: 'v1', ...method },
});
const lambda = (metricName: string, FunctionName: string): MetricId => ({
  namespace: 'AWS/Lambda',
  metricName,
  dimensions: { FunctionName },
});
const dynamo = (metricName: string, TableName: string, Operation?: string): MetricId => ({
  namespace: 'AWS/DynamoDB',
  metricName,
  dimensions: Operation ? { TableName, Operation } : { TableName },
});
const custom = (metricName: string): MetricId => ({ namespace: `PetStore/${STAGE}`, metricName, dimensions: {} });

/** The stack's template with getPet's reserved concurrency at 0, Lambda's off switch: every invocation is throttled. */
async function withGetPetOff(): Promise<CfnTemplate> {
  await ensureCloudAssembly(DEFAULT_OUTDIR, STAGE_APP, { quiet: true });
  const template = structuredClone(readStack(DEFAULT_OUTDIR, stackName(STAGE)).template);
  const [, getPet] = Object.entries(template.Resources).find(([id]) => id.startsWith('GetPetFunction'))!;
  getPet.Properties = { ...getPet.Properties, ReservedConcurrentExecutions: 0 };
  return template;
}

beforeAll(async () => {
  running = await startStage(STAGE, { metrics: store, template: await withGetPetOff() });
  const fn = (prefix: string) => running.api.functions.find((f) => f.logicalId.startsWith(prefix))!.functionName;
  names = {
    listPets: fn('ListPetsFunction'),
    createPet: fn('CreatePetFunction'),
    getPet: fn('GetPetFunction'),
    authorizer: fn('AuthorizerFunction'),
    pets: running.api.output('TableName'),
  };
}, 120_000);
afterAll(() => running?.close());

const auth = () => ({ Authorization: `Bearer ${running.key}` });
const create = (name: string) =>
  fetchApi(`${running.api.url}/pets`, {
    method: 'POST',
    headers: { ...auth(), 'Content-Type': 'application/json' },
    body: JSON.stringify({ name, categoryId: 1, status: 'available' }),
  });

describe('the metrics of real requests, under the alarms’ dimensions', () => {
  it('a 200, a 401, a 404 and a create: API Gateway, Lambda, DynamoDB and the metric filters', async () => {
    expect((await fetchApi(`${running.api.url}/pets`, { headers: auth() })).status).toBe(200);
    expect((await fetchApi(`${running.api.url}/pets`)).status).toBe(401);
    expect((await fetchApi(`${running.api.url}/nowhere`, { headers: auth() })).status).toBe(404);
    expect((await create('Metered')).status).toBe(201);

    expect(values(api('Count'))).toEqual([1, 1, 1, 1]);
    expect(values(api('4XXError'))).toEqual([0, 1, 1, 0]);
    expect(sum(api('5XXError'))).toBe(0);
    const listMethod = { Resource: '/pets', Method: 'GET' };
    expect(values(api('Latency', listMethod))).toHaveLength(2);
    expect(values(api('IntegrationLatency', listMethod))).toHaveLength(1);
    expect(values(api('Latency', { Resource: '/pets', Method: 'POST' }))).toHaveLength(1);
    expect(Math.min(...values(api('Latency')))).toBeGreaterThan(0);

    expect(values(lambda('Invocations', names.listPets))).toEqual([1]);
    expect(values(lambda('Errors', names.listPets))).toEqual([0]);
    expect(values(lambda('ConcurrentExecutions', names.listPets))).toEqual([1]);
    expect(values(lambda('Duration', names.createPet))[0]).toBeGreaterThan(0);
    expect(sum(lambda('Invocations', names.authorizer))).toBeGreaterThanOrEqual(1);

    // The create's put, as the store counted it (its item is under 1 KB: one unit).
    expect(sum(dynamo('ConsumedWriteCapacityUnits', names.pets))).toBeGreaterThanOrEqual(1);
    // The access log's 401 line, and the functions' first request lines, through the templates' filters.
    expect(values(custom('UnauthorizedRequests'))).toEqual([1]);
    expect(values(custom('ListPetsColdStarts'))).toEqual([1]);
  });

  it('a throttled and a failing store: ThrottledRequests and SystemErrors for that table and operation', async () => {
    const faults = running.api.storeFaults!;
    faults.fault = { kind: 'throughput', tables: [names.pets], operations: ['PutItem'] };
    const throttled = await create('Throttled');
    faults.fault = undefined;
    expect(throttled.status).toBe(503);
    expect(sum(dynamo('ThrottledRequests', names.pets, 'PutItem'))).toBe(faults.injected);
    expect(sum(dynamo('WriteThrottleEvents', names.pets))).toBe(faults.injected);

    const before = faults.injected;
    faults.fault = { kind: 'error500', tables: [names.pets], operations: ['PutItem'] };
    const failed = await create('Failed');
    faults.fault = undefined;
    expect(failed.status).toBe(503);
    expect(sum(dynamo('SystemErrors', names.pets, 'PutItem'))).toBe(faults.injected - before);
    expect(values(dynamo('ThrottledRequests', running.api.output('ControlTableName'), 'Query'))).toEqual([]);
  });

  it('an invocation whose runtime dies is an Error; one past reserved concurrency is a Throttle', async () => {
    const faults = running.api.storeFaults!;
    const host = running.api.functions.find((f) => f.functionName === names.createPet)!.host;
    const createErrors = () => sum(api('5XXError', { Resource: '/pets', Method: 'POST' }));
    const errorsBefore = createErrors();
    const hung = new Promise<void>((resolve) => {
      faults.observe = (operation, body) => {
        if (operation === 'PutItem' && body.includes('"Doomed"')) resolve();
      };
    });
    faults.fault = { kind: 'hang', tables: [names.pets], operations: ['PutItem'], times: 1 };
    const answer = create('Doomed');
    await hung;
    // As an out-of-memory kill would: the sandbox dies mid-invocation.
    for (const pid of host.sandboxPids) process.kill(pid, 'SIGKILL');
    expect((await answer).status).toBe(502);
    faults.observe = undefined;
    expect(values(lambda('Errors', names.createPet)).filter((value) => value === 1)).toHaveLength(1);
    expect(createErrors()).toBe(errorsBefore + 1);

    expect((await fetchApi(`${running.api.url}/pets/1`, { headers: auth() })).status).toBe(502);
    expect(values(lambda('Throttles', names.getPet))).toEqual([1]);
    expect(values(lambda('Invocations', names.getPet))).toEqual([]);
  });
});

describe('every metric the alarms read is one the stage records', () => {
  it.each(['staging', 'production'] as const)('%s: all but the WAF’s', async (stage) => {
    await ensureCloudAssembly(DEFAULT_OUTDIR, STAGE_APP, { quiet: true });
    const unrecorded = unrecordedAlarmMetrics({
      outdir: DEFAULT_OUTDIR,
      stackName: stackName(stage),
      parameters: DEPLOY_PARAMETERS,
    });
    expect(unrecorded.map(({ alarm, metric }) => `${alarm}: ${metric.namespace} ${metric.metricName}`)).toEqual([
      `WafBlockedAlarmDCED7EEA: AWS/WAFV2 BlockedRequests`,
    ]);
  });
});
