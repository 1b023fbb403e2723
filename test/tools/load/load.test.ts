/**
 * `npm run load` for two seconds a server: the local API answers only 2xx and acknowledges pets;
 * when it answers otherwise, the command fails in one line.
 */
import { expect, it } from 'vitest';
import { runCli } from '../../support/cli.ts';

const SHORT = { LOAD_SECONDS: '2', LOAD_CONNECTIONS: '4' };

it('drives the local API with no answer but 2xx, checks the pets it acknowledged, and exits 0', async () => {
  const run = await runCli('scripts/load.ts', [], SHORT, 90_000);
  expect(run.code, run.stdout + run.stderr).toBe(0);
  expect(run.stdout).toMatch(/local API \(middy handlers\) .* non-2xx 0 {2}errors 0/);
  const [, acknowledged, unique, readable] = /local API check: (\d+) acknowledged, (\d+) unique ids, (\d+) readable: OK/.exec(run.stdout) ?? [];
  expect(Number(acknowledged)).toBeGreaterThan(0);
  expect(unique).toBe(acknowledged);
  expect(readable).toBe(acknowledged);
  expect(run.stderr).toBe('');
}, 120_000);

it('fails in one line when the local API answers other than 2xx (a 1 ms store budget: 503s)', async () => {
  const run = await runCli('scripts/load.ts', [], { ...SHORT, STORE_BUDGET_MS: '1' }, 90_000);
  expect(run.code).toBe(1);
  expect(run.stdout).toMatch(/local API check: .*FAILED \(\d+ answers were not 2xx\)/);
  expect(run.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^npm run load: FAILED, the local API: \d+ answers were not 2xx/)]);
}, 120_000);
