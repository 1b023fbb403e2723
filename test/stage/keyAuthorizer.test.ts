/**
 * The key authorizer and the usage plan, run as deployed (staging: the same authorizer and plan as
 * production, without the web ACL, which the runner does not emulate): a keyless or malformed request
 * never invokes an operation function, the authorizer's answer is cached per key, and each key has
 * its own token bucket. Counts come from the function hosts themselves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackName } from '../../infra/stages.ts';
import {
  startDeployedApi,
  type DeployedApi,
  type DeployedFunction,
} from '../../tools/stage-emulator/src/deployedApi.ts';
import { ensureCloudAssembly } from '../../tools/stage-emulator/src/freshAssembly.ts';
import { readStack } from '../../tools/stage-emulator/src/cloudAssembly.ts';
import { runKeys } from '../../tools/keys/keys.ts';
import { fetchApi } from '../support/http.ts';
import { keyIn } from '../support/keys.ts';
import { DEFAULT_OUTDIR, EDGE_ERRORS, STAGE_APP } from '../../local/stageApp.ts';

const STAGE = 'staging';

let api: DeployedApi;
const logs: string[] = [];
/** Issued before any request: the authorizer keeps the keys it read for minutes (lib/store/cache.ts). */
const keys: string[] = [];

const issueKey = () => issueKeyIn(api);

async function issueKeyIn(stage: DeployedApi): Promise<string> {
  const out: string[] = [];
  const code = await runKeys(
    ['create', '--stage', STAGE, '--table', stage.output('ControlTableName'), '--endpoint', stage.storeEndpoint],
    {
      out: (line) => out.push(line),
      err: (line) => out.push(line),
      env: { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'operator', AWS_SECRET_ACCESS_KEY: 'operator' },
    },
  );
  const key = keyIn(out.join('\n'));
  if (code !== 0 || !key) throw new Error(`keys create failed: ${out.join('\n')}`);
  return key;
}

const fn = (name: RegExp): DeployedFunction => api.functions.find((f) => name.test(f.logicalId))!;
const authorizer = () => fn(/^AuthorizerFunction/);
const operations = () => api.functions.filter((f) => f !== authorizer());
const operationInvocations = () => operations().reduce((sum, f) => sum + f.host.invocations, 0);

beforeAll(async () => {
  await ensureCloudAssembly(DEFAULT_OUTDIR, STAGE_APP, { quiet: true });
  api = await startDeployedApi({
    stackName: stackName(STAGE),
    outdir: DEFAULT_OUTDIR,
    app: STAGE_APP,
    edgeErrors: EDGE_ERRORS,
    port: 0,
    log: (line) => logs.push(line),
  });
  keys.push(await issueKey());
}, 240_000);
afterAll(async () => {
  await api?.close();
});

describe('the key authorizer, run as deployed', () => {
  it('runs the authorizer from its own asset, beside one function per operation', () => {
    expect(authorizer()).toBeDefined();
    expect(operations()).toHaveLength(3);
  });

  it('answers a keyless or malformed request 401 in the Error shape, with the challenge, and never invokes an operation', async () => {
    const before = operationInvocations();
    const authorizerBefore = authorizer().host.invocations;
    const keyless = await fetchApi(`${api.url}/pets`);
    expect(keyless.status).toBe(401);
    expect(keyless.body).toEqual({ code: 'UNAUTHORIZED', message: expect.stringContaining('Bearer'), status: 401 });
    expect(keyless.headers.get('www-authenticate')).toBe('Bearer realm="petstore"');
    // No Authorization at all: API Gateway refuses it without running the authorizer either.
    expect(authorizer().host.invocations).toBe(authorizerBefore);

    for (const authorization of [
      'Bearer nonsense',
      'Basic dXNlcjpwYXNz',
      `Bearer psk_000000000000_${'A'.repeat(43)}`,
    ]) {
      const refused = await fetchApi(`${api.url}/pets`, {
        method: 'POST',
        headers: { Authorization: authorization, 'Content-Type': 'application/json' },
        body: '{}',
      });
      expect(refused.status, authorization).toBe(401);
      expect(refused.body.code).toBe('UNAUTHORIZED');
    }
    expect(operationInvocations()).toBe(before);
  });

  it('caches its answer per key: a second request with the same key does not run it again', async () => {
    const [key] = keys as [string];
    const auth = { Authorization: `Bearer ${key}` };
    const before = authorizer().host.invocations;
    const first = await fetchApi(`${api.url}/pets?limit=1`, { headers: auth });
    expect(first.status).toBe(200);
    expect(authorizer().host.invocations).toBe(before + 1);
    const second = await fetchApi(`${api.url}/pets?limit=1`, { headers: auth });
    expect(second.status).toBe(200);
    expect(authorizer().host.invocations).toBe(before + 1);
  });

  it("throttles each key in its own bucket, from the template's usage plan, in the Error shape, before any function runs", async () => {
    // A copy of the template with a usage plan of 1 request/s, burst 3: a loaded runner answers tens of
    // requests a second, too few to drain the stage's real 10/s, burst 20 (test/infra asserts those).
    const limited = await startDeployedApi({
      stackName: stackName(STAGE),
      outdir: DEFAULT_OUTDIR,
      app: STAGE_APP,
      edgeErrors: EDGE_ERRORS,
      port: 0,
      log: () => {},
      template: withKeyThrottle(1, 3),
    });
    try {
      const [a, b] = [await issueKeyIn(limited), await issueKeyIn(limited)];
      const get = (key: string) => fetchApi(`${limited.url}/pets/1`, { headers: { Authorization: `Bearer ${key}` } });
      expect((await get(a)).status).toBe(404);
      expect((await get(b)).status).toBe(404);
      const getPet = limited.functions.find((f) => /^GetPetFunction/.test(f.logicalId))!;
      const before = getPet.host.invocations;

      const answers = await Promise.all(Array.from({ length: 10 }, () => get(a)));
      const throttled = answers.filter((answer) => answer.status === 429);
      expect(throttled.length).toBeGreaterThanOrEqual(3);
      for (const answer of throttled) {
        expect(answer.body).toMatchObject({ code: 'TOO_MANY_REQUESTS', status: 429 });
        expect(answer.headers.get('retry-after')).toBeTruthy();
      }
      // Only what the bucket let through reached the function.
      expect(getPet.host.invocations - before).toBe(answers.length - throttled.length);
      // The other key has its own bucket, untouched by the first key's burst.
      expect((await get(b)).status).toBe(404);
    } finally {
      await limited.close();
    }
  }, 120_000);
});

/** The stack's template with its usage plan's throttle replaced. */
function withKeyThrottle(rateLimit: number, burstLimit: number) {
  const template = structuredClone(readStack(DEFAULT_OUTDIR, stackName(STAGE)).template);
  const plan = Object.values(template.Resources).find((resource) => resource.Type === 'AWS::ApiGateway::UsagePlan')!;
  plan.Properties!.Throttle = { RateLimit: rateLimit, BurstLimit: burstLimit };
  return template;
}
