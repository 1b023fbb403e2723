/** LambdaFunctionHost scaling as Lambda does it: a sandbox per concurrent request, reserved concurrency, idle recycling. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { LambdaFunctionHost, MAX_INSTANCES, type FunctionDefinition } from '../../../local/deployed/lambdaHost.ts';

let fixtureDir: string;
const hosts: LambdaFunctionHost[] = [];

beforeAll(() => {
  fixtureDir = mkdtempSync(join(tmpdir(), 'lambda-scaling-'));
  writeFileSync(join(fixtureDir, 'index.mjs'), `export const slow = async (event) => { await new Promise((r) => setTimeout(r, event.ms)); return { pid: process.pid }; };`);
});
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => host.close()));
});
afterAll(() => rmSync(fixtureDir, { recursive: true, force: true }));

function startHost(overrides: Partial<FunctionDefinition>, lines: string[]): LambdaFunctionHost {
  const host = new LambdaFunctionHost({
    functionName: 'PetStore-scaling',
    assetDir: fixtureDir,
    handler: 'index.slow',
    runtime: 'nodejs22.x',
    memoryMiB: 128,
    timeoutSeconds: 10,
    region: 'us-east-1',
    environment: {},
    credentials: { accessKeyId: 'AKIAFIXTURE', secretAccessKey: 'fixture-secret', sessionToken: 'fixture-token' },
    endpointOverrides: {},
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:PetStore-scaling:live',
    functionVersion: '1',
    logGroupName: '/aws/lambda/PetStore-scaling',
    log: (line) => lines.push(line),
    ...overrides,
  });
  hosts.push(host);
  return host;
}

const reports = (lines: string[]) => lines.filter((line) => line.startsWith('REPORT RequestId: '));
const pidsOf = (outcomes: Awaited<ReturnType<LambdaFunctionHost['invoke']>>[]) =>
  outcomes.map((outcome) => (outcome.kind === 'ok' ? (outcome.payload as { pid: number }).pid : outcome));

it('N concurrent requests get N sandboxes, each with its own cold start; the next request is warm', async () => {
  const N = 4;
  expect(N).toBeLessThan(MAX_INSTANCES);
  const lines: string[] = [];
  const host = startHost({}, lines);
  const outcomes = await Promise.all(Array.from({ length: N }, () => host.invoke({ ms: 400 })));
  expect(new Set(pidsOf(outcomes)).size).toBe(N);
  expect(host.coldStarts).toBe(N);
  expect(host.sandboxPids).toHaveLength(N);
  expect(reports(lines)).toHaveLength(N);
  for (const report of reports(lines)) expect(report).toMatch(/\tInit Duration: \d+\.\d\d ms$/);

  lines.length = 0;
  await host.invoke({ ms: 1 });
  expect(host.coldStarts).toBe(N);
  expect(reports(lines)).toHaveLength(1);
  expect(reports(lines)[0]).not.toMatch(/Init Duration/);
}, 30_000);

it('reserved concurrency bounds the sandboxes: more concurrent requests wait for one', async () => {
  const lines: string[] = [];
  const host = startHost({ reservedConcurrency: 2 }, lines);
  expect(host.concurrencyLimit).toBe(2);
  const outcomes = await Promise.all(Array.from({ length: 4 }, () => host.invoke({ ms: 300 })));
  expect(new Set(pidsOf(outcomes)).size).toBe(2);
  expect(host.coldStarts).toBe(2);
  expect(reports(lines).filter((line) => line.includes('Init Duration'))).toHaveLength(2);
  expect(reports(lines)).toHaveLength(4);
}, 30_000);

it('reserved concurrency 0 throttles every invocation, as Lambda does', async () => {
  const host = startHost({ reservedConcurrency: 0 }, []);
  expect(await host.invoke({ ms: 1 })).toEqual({ kind: 'error', errorType: 'TooManyRequestsException', errorMessage: 'Rate Exceeded.' });
  expect(host.coldStarts).toBe(0);
});

it('a sandbox idle past the idle timeout is recycled: the next request starts cold', async () => {
  const lines: string[] = [];
  const host = startHost({ idleTimeoutMs: 300 }, lines);
  const [first] = pidsOf([await host.invoke({ ms: 1 })]);
  expect(host.sandboxPids).toEqual([first]);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(host.sandboxPids).toEqual([]);
  const [second] = pidsOf([await host.invoke({ ms: 1 })]);
  expect(second).not.toBe(first);
  expect(host.coldStarts).toBe(2);
  expect(reports(lines).filter((line) => line.includes('Init Duration'))).toHaveLength(2);
}, 30_000);
