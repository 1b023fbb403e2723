/** LambdaFunctionHost scaling as Lambda does it: a sandbox per concurrent request, throttling past reserved concurrency, idle recycling. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import { performance } from 'node:perf_hooks';
import { THROTTLED_OUTCOME, type FunctionDefinition, type InvokeOutcome } from '../src/lambdaFunction.ts';
import { LambdaFunctionHost, MAX_INSTANCES } from '../src/lambdaHost.ts';
import { FunctionInstance } from '../src/sandbox.ts';
import { freePort } from '../../../test/support/ports.ts';
import { fixtureFunction } from '../../../test/support/lambdaFixture.ts';

let fixtureDir: string;
const hosts: LambdaFunctionHost[] = [];

beforeAll(() => {
  fixtureDir = mkdtempSync(join(tmpdir(), 'lambda-scaling-'));
  // The handler takes the time it is asked to, in its sandbox: the work timed, not a wait of the test's.
  writeFileSync(
    join(fixtureDir, 'index.mjs'),
    `export const slow = async (event) => { await new Promise((r) => setTimeout(r, event.ms)); return { pid: process.pid }; };`,
  );
});
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => host.close()));
});
afterAll(() => rmSync(fixtureDir, { recursive: true, force: true }));

function startHost(overrides: Partial<FunctionDefinition>, lines: string[]): LambdaFunctionHost {
  const host = new LambdaFunctionHost(
    fixtureFunction('scaling', fixtureDir, { handler: 'index.slow', log: (line) => lines.push(line), ...overrides }),
  );
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

/** Each outcome with how long after `started` it came. */
function timed(started: number, outcome: Promise<InvokeOutcome>) {
  return outcome.then((settled) => ({ outcome: settled, afterMs: performance.now() - started }));
}

it('past reserved concurrency N, Lambda throttles at once: N of N+k concurrent invocations run, k are refused without waiting', async () => {
  const N = 2;
  const k = 2;
  const slowMs = 1_500;
  const lines: string[] = [];
  const host = startHost({ reservedConcurrency: N }, lines);
  expect(host.concurrencyLimit).toBe(N);
  const started = performance.now();
  const results = await Promise.all(Array.from({ length: N + k }, () => timed(started, host.invoke({ ms: slowMs }))));
  const ran = results.filter((result) => result.outcome.kind === 'ok');
  const refused = results.filter((result) => result.outcome.kind !== 'ok');
  expect(new Set(pidsOf(ran.map((result) => result.outcome))).size).toBe(N);
  expect(refused.map((result) => result.outcome)).toEqual(Array.from({ length: k }, () => THROTTLED_OUTCOME));
  expect(THROTTLED_OUTCOME).toMatchObject({
    errorType: 'TooManyRequestsException',
    reason: 'ReservedFunctionConcurrentInvocationLimitExceeded',
  });
  // Refused at once, not after a sandbox came free (the slow ones take slowMs).
  for (const result of refused) expect(result.afterMs).toBeLessThan(slowMs / 3);
  for (const result of ran) expect(result.afterMs).toBeGreaterThanOrEqual(slowMs);
  expect(host.coldStarts).toBe(N);
  expect(reports(lines)).toHaveLength(N);
  expect(host.invocations).toBe(N + k);

  // Once they are answered, the concurrency is free again: N more run on the warm sandboxes.
  const again = await Promise.all(Array.from({ length: N }, () => host.invoke({ ms: 1 })));
  expect(again.map((outcome) => outcome.kind)).toEqual(Array.from({ length: N }, () => 'ok'));
  expect(host.coldStarts).toBe(N);
}, 30_000);

it("under --inspect, the one sandbox is the runner's limit: requests within reserved concurrency wait for it, the one past it is throttled", async () => {
  const lines: string[] = [];
  const host = startHost({ reservedConcurrency: 2, inspectPort: await freePort() }, lines);
  expect(host.concurrencyLimit).toBe(1);
  const started = performance.now();
  const results = await Promise.all(Array.from({ length: 3 }, () => timed(started, host.invoke({ ms: 500 }))));
  const ran = results.filter((result) => result.outcome.kind === 'ok');
  expect(ran).toHaveLength(2);
  // One sandbox, one after the other: the second waited for the first rather than being refused.
  expect(new Set(pidsOf(ran.map((result) => result.outcome))).size).toBe(1);
  expect(Math.max(...ran.map((result) => result.afterMs))).toBeGreaterThanOrEqual(1_000);
  const [refused] = results.filter((result) => result.outcome.kind !== 'ok');
  expect(refused!.outcome).toEqual(THROTTLED_OUTCOME);
  expect(refused!.afterMs).toBeLessThan(300);
  expect(host.coldStarts).toBe(1);
}, 30_000);

it('reserved concurrency 0 throttles every invocation, as Lambda does', async () => {
  const host = startHost({ reservedConcurrency: 0 }, []);
  expect(await host.invoke({ ms: 1 })).toEqual(THROTTLED_OUTCOME);
  expect(host.coldStarts).toBe(0);
});

it('a sandbox idle past the idle timeout is recycled: the next request starts cold', async () => {
  const lines: string[] = [];
  // Each kill's end (the sandbox's exit), to wait for the recycling one.
  const kills: Promise<void>[] = [];
  const kill = FunctionInstance.prototype.kill;
  vi.spyOn(FunctionInstance.prototype, 'kill').mockImplementation(function (this: FunctionInstance) {
    const killed = kill.call(this);
    kills.push(killed);
    return killed;
  });
  // The host's timers on a fake clock (the sandboxes, other processes, keep their own): the idle
  // timeout is run through at once.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  const host = startHost({ idleTimeoutMs: 300 }, lines);
  let first: ReturnType<typeof pidsOf>[number] | undefined;
  try {
    [first] = pidsOf([await host.invoke({ ms: 1 })]);
    expect(host.sandboxPids).toEqual([first]);
    vi.advanceTimersByTime(299);
    expect(kills).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(kills).toHaveLength(1);
  } finally {
    vi.useRealTimers();
    vi.restoreAllMocks();
  }
  await Promise.all(kills);
  expect(host.sandboxPids).toEqual([]);
  const [second] = pidsOf([await host.invoke({ ms: 1 })]);
  expect(second).not.toBe(first);
  expect(host.coldStarts).toBe(2);
  expect(reports(lines).filter((line) => line.includes('Init Duration'))).toHaveLength(2);
}, 30_000);
