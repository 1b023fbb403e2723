/**
 * LambdaFunctionHost on real Node 22 child processes: fixture handlers written to a temp folder,
 * and one real bundled function from /work/main/cdk.out against an embedded dynalite.
 */
import { ensureCloudAssembly } from '../../tools/stage-emulator/src/freshAssembly.ts';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LAMBDA_ENVIRONMENT_NAMES } from '../../tools/stage-emulator/src/lambdaEnvironment.ts';
import {
  INVOKE_PAYLOAD_LIMIT_BYTES,
  LambdaHostError,
  type FunctionDefinition,
  type InvokeOutcome,
} from '../../tools/stage-emulator/src/lambdaFunction.ts';
import { LambdaFunctionHost } from '../../tools/stage-emulator/src/lambdaHost.ts';
import { ensureControlTable, ensurePetsTable, startEmbeddedStore } from '../../local/embeddedStore.ts';
import { fixtureFunction } from '../support/lambdaFixture.ts';
import { DEFAULT_OUTDIR, STAGE_APP } from '../../local/stageApp.ts';

// The fixture's sleeps are what its handlers do (take time, answer by callback), not the test's waits.
const FIXTURE_MJS = `
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const env = async () => ({ names: Object.keys(process.env), values: { ...process.env } });
export const echo = async (event, context) => {
  const before = context.getRemainingTimeInMillis();
  await sleep(30);
  console.log('echoing', JSON.stringify(event));
  return {
    event, before, after: context.getRemainingTimeInMillis(), awsRequestId: context.awsRequestId,
    functionName: context.functionName, functionVersion: context.functionVersion,
    invokedFunctionArn: context.invokedFunctionArn, memoryLimitInMB: context.memoryLimitInMB,
    logGroupName: context.logGroupName, logStreamName: context.logStreamName,
    waits: context.callbackWaitsForEmptyEventLoop, traceId: process.env._X_AMZN_TRACE_ID,
  };
};
export const handlers = { pets: { get: async () => 'nested export' } };
export const fails = async () => { throw new TypeError('bad pet'); };
export const slow = async (event) => { await sleep(event.ms); return { pid: process.pid }; };
export const hangOnce = async (event) => { if (event.hang) await new Promise(() => {}); return { pid: process.pid }; };
export const crash = async () => { process.exit(3); };
export const withCallback = (event, context, callback) => { setTimeout(() => callback(null, { viaCallback: event.n }), 5); };
export const notAFunction = 42;
`;

/** Writes the fixture handlers: index.mjs plus the modules the resolution tests need. */
function writeFixtures(dir: string): void {
  writeFileSync(join(dir, 'index.mjs'), FIXTURE_MJS);
  writeFileSync(join(dir, 'app.js'), `exports.handler = async () => 'app.js as CommonJS';`);
  writeFileSync(join(dir, 'legacy.js'), `module.exports = { handlers: { get: async () => 'module.exports nested' } };`);
  writeFileSync(join(dir, 'both.js'), `exports.handler = async () => 'both.js';`);
  writeFileSync(join(dir, 'both.mjs'), `export const handler = async () => 'both.mjs';`);
  writeFileSync(join(dir, 'esm.mjs'), `export const handler = async () => 'esm.mjs';`);
  writeFileSync(join(dir, 'broken.mjs'), `throw new RangeError('init boom');\nexport const handler = async () => 1;`);
}

let fixtureDir: string;
const hosts: LambdaFunctionHost[] = [];

beforeAll(() => {
  fixtureDir = mkdtempSync(join(tmpdir(), 'lambda-host-'));
  writeFixtures(fixtureDir);
});
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => host.close()));
});
afterAll(() => rmSync(fixtureDir, { recursive: true, force: true }));

function definition(overrides: Partial<FunctionDefinition> = {}): FunctionDefinition {
  return fixtureFunction('fixture', fixtureDir, {
    handler: 'index.echo',
    memoryMiB: 256,
    timeoutSeconds: 5,
    environment: { TABLE_NAME: 'pets-table' },
    endpointOverrides: { AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:1' },
    functionVersion: '7',
    log: undefined,
    ...overrides,
  });
}

function startHost(overrides: Partial<FunctionDefinition> = {}) {
  const lines: string[] = [];
  const host = new LambdaFunctionHost({ ...definition(overrides), log: (line) => lines.push(line) });
  hosts.push(host);
  return { host, lines };
}

function payloadOf(outcome: InvokeOutcome): unknown {
  if (outcome.kind !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(outcome)}`);
  return outcome.payload;
}

describe('environment', () => {
  it('is exactly what Lambda sets, plus the template variables and the endpoint overrides', async () => {
    const { host } = startHost({ handler: 'index.env' });
    const { names, values } = payloadOf(await host.invoke({})) as { names: string[]; values: Record<string, string> };
    expect(names.sort()).toEqual([...LAMBDA_ENVIRONMENT_NAMES, 'TABLE_NAME', 'AWS_ENDPOINT_URL_DYNAMODB'].sort());
    expect(values).toMatchObject({
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256',
      AWS_LAMBDA_FUNCTION_VERSION: '7',
      AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
      AWS_ACCESS_KEY_ID: 'AKIAFIXTURE',
      AWS_SESSION_TOKEN: 'fixture-token',
      LAMBDA_TASK_ROOT: fixtureDir,
      _HANDLER: 'index.env',
      TZ: ':UTC',
      NODE_PATH:
        '/opt/nodejs/node22/node_modules:/opt/nodejs/node_modules:/var/runtime/node_modules:/var/runtime:/var/task',
      TABLE_NAME: 'pets-table',
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:1',
    });
    expect(values.PATH).toMatch(/^\/.+:\/var\/lang\/bin:\/usr\/local\/bin:\/usr\/bin\/:\/bin:\/opt\/bin$/);
    expect(values.AWS_LAMBDA_LOG_STREAM_NAME).toMatch(/^\d{4}\/\d{2}\/\d{2}\/\[7\][0-9a-f]{32}$/);
    expect(values._X_AMZN_TRACE_ID).toMatch(/^Root=1-[0-9a-f]{8}-[0-9a-f]{24};Parent=[0-9a-f]{16};Sampled=1$/);
  });

  it('refuses a reserved variable in the template, as Lambda does', () => {
    expect(() => new LambdaFunctionHost(definition({ environment: { AWS_REGION: 'eu-west-1' } }))).toThrow(
      LambdaHostError,
    );
    expect(() => new LambdaFunctionHost(definition({ environment: { _HANDLER: 'x.y' } }))).toThrow(
      /reserved.*_HANDLER/,
    );
  });

  it('refuses a missing asset folder', () => {
    expect(() => new LambdaFunctionHost(definition({ assetDir: join(fixtureDir, 'absent') }))).toThrow(
      /absent does not exist/,
    );
  });

  it('refuses a runtime other than nodejs22.x', () => {
    expect(() => new LambdaFunctionHost(definition({ runtime: 'nodejs20.x' }))).toThrow(/nodejs20\.x is not supported/);
  });
});

describe('handler resolution', () => {
  it.each([
    ['app.handler', 'app.js as CommonJS'],
    ['esm.handler', 'esm.mjs'],
    ['both.handler', 'both.js'],
    ['index.handlers.pets.get', 'nested export'],
    ['legacy.handlers.get', 'module.exports nested'],
  ])('%s', async (handler, expected) => {
    const { host } = startHost({ handler });
    expect(await host.invoke({})).toEqual({ kind: 'ok', payload: expected });
  });

  it.each([
    ['missing.handler', 'Runtime.ImportModuleError', /Cannot find module 'missing'/],
    ['index.nothing', 'Runtime.HandlerNotFound', /index\.nothing is undefined or not exported/],
    ['index.notAFunction', 'Runtime.HandlerNotFound', /index\.notAFunction is not a function/],
    ['index', 'Runtime.MalformedHandlerName', /Bad handler/],
    ['../index.echo', 'Runtime.MalformedHandlerName', /not a valid handler name/],
    ['broken.handler', 'RangeError', /init boom/],
  ])('%s fails init with %s, and the instance is discarded', async (handler, errorType, message) => {
    const { host, lines } = startHost({ handler });
    const outcome = await host.invoke({});
    expect(outcome).toMatchObject({ kind: 'error', errorType });
    expect(outcome.kind === 'error' && outcome.errorMessage).toMatch(message);
    expect(lines.some((line) => line.startsWith('INIT_REPORT') && line.includes(`Error Type: ${errorType}`))).toBe(
      true,
    );
    await host.invoke({});
    expect(host.coldStarts).toBe(2);
  });
});

describe('invocation', () => {
  // AWS, "Lambda quotas" (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html):
  // "Invocation payload (request and response): 6 MB each for request and response (synchronous)".
  it("refuses an event over Lambda's 6 MB invoke payload limit before any instance sees it", async () => {
    const { host } = startHost({ timeoutSeconds: 3 });
    const outcome = await host.invoke({ body: 'x'.repeat(INVOKE_PAYLOAD_LIMIT_BYTES) });
    expect(outcome).toMatchObject({ kind: 'error', errorType: 'RequestEntityTooLargeException' });
    expect(host.coldStarts).toBe(0);
  });

  it('gives the handler a Lambda context and answers its result through JSON', async () => {
    const { host, lines } = startHost({ timeoutSeconds: 3 });
    const result = payloadOf(await host.invoke({ pet: 'Rex', at: undefined })) as Record<string, unknown>;
    expect(result).toMatchObject({
      event: { pet: 'Rex' },
      functionName: 'PetStore-fixture',
      functionVersion: '7',
      invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:PetStore-fixture:live',
      memoryLimitInMB: '256',
      logGroupName: '/aws/lambda/PetStore-fixture',
      waits: true,
    });
    expect(result.awsRequestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const before = result.before as number;
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThanOrEqual(3000);
    expect(result.after as number).toBeLessThan(before);
    expect(lines).toContain(`START RequestId: ${result.awsRequestId as string} Version: 7`);
    expect(lines.some((line) => line.endsWith(`\t${result.awsRequestId as string}\tINFO\techoing {"pet":"Rex"}`))).toBe(
      true,
    );
  });

  it('supports callback-style handlers', async () => {
    const { host } = startHost({ handler: 'index.withCallback' });
    expect(await host.invoke({ n: 4 })).toEqual({ kind: 'ok', payload: { viaCallback: 4 } });
  });

  it('answers a thrown error by its name and message, and logs it as Invoke Error', async () => {
    const { host, lines } = startHost({ handler: 'index.fails' });
    expect(await host.invoke({})).toEqual({ kind: 'error', errorType: 'TypeError', errorMessage: 'bad pet' });
    const logged = lines.find((line) => /\tERROR\tInvoke Error \t/.test(line));
    expect(logged).toBeDefined();
    const details = JSON.parse(logged!.split('Invoke Error \t')[1]!) as {
      errorType: string;
      errorMessage: string;
      stack: string[];
    };
    expect(details).toMatchObject({ errorType: 'TypeError', errorMessage: 'bad pet' });
    expect(details.stack[0]).toBe('TypeError: bad pet');
    // The instance survives a handled error: the next invocation is warm.
    await host.invoke({});
    expect(host.coldStarts).toBe(1);
  });

  it('kills an instance that times out; the next invocation cold-starts a fresh one', async () => {
    const { host, lines } = startHost({ handler: 'index.hangOnce', timeoutSeconds: 1 });
    expect(await host.invoke({ hang: true })).toEqual({
      kind: 'timeout',
      errorMessage: 'Task timed out after 1.00 seconds',
    });
    expect(lines.some((line) => line.endsWith('Task timed out after 1.00 seconds'))).toBe(true);
    expect(lines.some((line) => line.startsWith('REPORT RequestId:') && line.includes('Status: timeout'))).toBe(true);
    expect(host.coldStarts).toBe(1);
    payloadOf(await host.invoke({ hang: false }));
    expect(host.coldStarts).toBe(2);
  });

  it('answers Runtime.ExitError when the handler exits the process, and replaces the instance', async () => {
    const { host } = startHost({ handler: 'index.crash' });
    const outcome = await host.invoke({});
    expect(outcome).toMatchObject({ kind: 'error', errorType: 'Runtime.ExitError' });
    expect(outcome.kind === 'error' && outcome.errorMessage).toMatch(/Runtime exited with error: exit status 3$/);
    await host.invoke({});
    expect(host.coldStarts).toBe(2);
  });

  it('runs concurrent invocations on separate instances and reuses idle ones', async () => {
    const { host } = startHost({ handler: 'index.slow' });
    const [first, second] = await Promise.all([host.invoke({ ms: 300 }), host.invoke({ ms: 300 })]);
    const pids = [payloadOf(first!), payloadOf(second!)].map((payload) => (payload as { pid: number }).pid);
    expect(new Set(pids).size).toBe(2);
    expect(host.coldStarts).toBe(2);
    const third = payloadOf(await host.invoke({ ms: 1 })) as { pid: number };
    expect(pids).toContain(third.pid);
    expect(host.coldStarts).toBe(2);
  });

  it('writes START, END and REPORT lines, with Init Duration on the cold start only', async () => {
    const { host, lines } = startHost({ handler: 'index.slow' });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      await host.invoke({ ms: 1 });
      ids.push(/^START RequestId: (\S+) Version: 7$/.exec(lines.findLast((line) => line.startsWith('START'))!)![1]!);
    }
    const report =
      /^REPORT RequestId: (\S+)\tDuration: [\d.]+ ms\tBilled Duration: \d+ ms\tMemory Size: 256 MB\tMax Memory Used: (\d+) MB(\tInit Duration: [\d.]+ ms)?$/;
    const reports = lines.filter((line) => line.startsWith('REPORT')).map((line) => report.exec(line));
    expect(reports.map((match) => match?.[1])).toEqual(ids);
    expect(reports.map((match) => match?.[3] !== undefined)).toEqual([true, false]);
    expect(Number(reports[0]![2])).toBeGreaterThan(0);
    for (const id of ids) {
      const order = ['START', 'END', 'REPORT'].map((kind) =>
        lines.findIndex((line) => line.startsWith(`${kind} RequestId: ${id}`)),
      );
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
  });

  it('close() kills every instance; an invocation in flight ends with Runtime.ExitError', async () => {
    // In flight once its sandbox's runtime has written its START line.
    let markStarted = () => {};
    const started = new Promise<void>((resolve) => (markStarted = resolve));
    const host = new LambdaFunctionHost({
      ...definition({ handler: 'index.hangOnce' }),
      log: (line) => line.startsWith('START RequestId:') && markStarted(),
    });
    hosts.push(host);
    const inFlight = host.invoke({ hang: true });
    await started;
    await host.close();
    expect(await inFlight).toMatchObject({ kind: 'error', errorType: 'Runtime.ExitError' });
    await expect(host.invoke({})).rejects.toThrow(/closed/);
  });
});

const CDK_OUT = DEFAULT_OUTDIR;
const STAGING_TEMPLATE = join(CDK_OUT, 'PetStore-staging.template.json');

describe('a real bundled asset from cdk.out (synthesized first when stale)', () => {
  beforeAll(() => ensureCloudAssembly(CDK_OUT, STAGE_APP, { quiet: true }), 180_000);

  it('answers 401 UNAUTHORIZED without Authorization, and reads the control table through the endpoint override', async () => {
    const template = JSON.parse(readFileSync(STAGING_TEMPLATE, 'utf8')) as {
      Resources: Record<
        string,
        { Type: string; Properties: Record<string, unknown>; Metadata?: Record<string, string> }
      >;
    };
    const [logicalId, fn] = Object.entries(template.Resources).find(
      ([id, resource]) => resource.Type === 'AWS::Lambda::Function' && id.startsWith('ListPetsFunction'),
    )!;
    const assetDir = join(CDK_OUT, fn.Metadata!['aws:asset:path']!);
    const store = await startEmbeddedStore();
    try {
      await ensurePetsTable(store.endpoint, 'pets-staging');
      await ensureControlTable(store.endpoint, 'petstore-control-staging');
      const { host, lines } = startHost({
        functionName: `PetStore-staging-${logicalId}`,
        assetDir,
        handler: fn.Properties.Handler as string,
        memoryMiB: fn.Properties.MemorySize as number,
        timeoutSeconds: fn.Properties.Timeout as number,
        environment: { TABLE_NAME: 'pets-staging', CONTROL_TABLE_NAME: 'petstore-control-staging' },
        endpointOverrides: { AWS_ENDPOINT_URL_DYNAMODB: store.endpoint },
      });
      const event = JSON.parse(readFileSync(new URL('../../events/listPets.json', import.meta.url), 'utf8')) as {
        headers: Record<string, string>;
        multiValueHeaders: Record<string, string[]>;
      };
      delete event.headers.Authorization;
      delete event.multiValueHeaders.Authorization;
      const result = payloadOf(await host.invoke(event)) as { statusCode: number; body: string };
      expect(result.statusCode).toBe(401);
      expect(JSON.parse(result.body)).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
      expect(lines.some((line) => line.startsWith('REPORT RequestId:') && line.includes('Init Duration'))).toBe(true);

      // An unknown key makes the function read the control table: only through the endpoint override
      // (dynalite) can it answer 401 invalid_token rather than 503.
      event.headers.Authorization = 'Bearer not-a-known-key';
      const unknownKey = payloadOf(await host.invoke(event)) as { statusCode: number; headers: Record<string, string> };
      expect(unknownKey.statusCode).toBe(401);
      expect(unknownKey.headers['WWW-Authenticate']).toContain('error="invalid_token"');
      expect(host.coldStarts).toBe(1);
    } finally {
      await store.close();
    }
  });
});

if (!existsSync(STAGING_TEMPLATE))
  console.warn(`skipping the real-asset test: ${STAGING_TEMPLATE} is absent (run npx cdk synth)`);
