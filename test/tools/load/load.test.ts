/**
 * `npm run load` for a second a server: the local API answers only 2xx and acknowledges pets;
 * when it answers otherwise, the command fails in one line.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ensureControlTable,
  ensurePetsTable,
  startEmbeddedStore,
  type EmbeddedStore,
} from '../../../local/embeddedStore.ts';
import { bareServer } from '../../../tools/load/load.ts';
import { runCli } from '../../support/cli.ts';

const SHORT = { LOAD_SECONDS: '1', LOAD_CONNECTIONS: '4' };

it('drives the local API with no answer but 2xx, checks the pets it acknowledged, and exits 0', async () => {
  const run = await runCli('scripts/load.ts', [], SHORT, 90_000);
  expect(run.code, run.stdout + run.stderr).toBe(0);
  expect(run.stdout).toMatch(/local API \(middy handlers\) .* non-2xx 0 {2}errors 0/);
  const [, acknowledged, unique, readable] =
    /local API check: (\d+) acknowledged, (\d+) unique ids, (\d+) readable: OK/.exec(run.stdout) ?? [];
  expect(Number(acknowledged)).toBeGreaterThan(0);
  expect(unique).toBe(acknowledged);
  expect(readable).toBe(acknowledged);
  expect(run.stderr).toBe('');
}, 120_000);

it('fails in one line when the local API answers other than 2xx (a 1 ms store budget: 503s)', async () => {
  const run = await runCli('scripts/load.ts', [], { ...SHORT, STORE_BUDGET_MS: '1' }, 90_000);
  expect(run.code).toBe(1);
  expect(run.stdout).toMatch(/local API check: .*FAILED \(\d+ answers were not 2xx \(503 x\d+\)\)/);
  expect(run.stderr.trimEnd().split('\n')).toEqual([
    expect.stringMatching(/^npm run load: FAILED, the local API: \d+ answers were not 2xx/),
  ]);
}, 120_000);

describe('the bare server it compares with', () => {
  let store: EmbeddedStore;
  beforeAll(async () => {
    store = await startEmbeddedStore();
    await ensurePetsTable(store.endpoint, 'pets-bare');
    await ensureControlTable(store.endpoint, 'control-bare');
  });
  afterAll(() => store.close());

  /** POSTs a pet to a bare server on `endpoint`; its status and what it wrote to the error log. */
  async function create(endpoint: string, newId?: () => number) {
    const errors: string[] = [];
    const spy = vi
      .spyOn(console, 'error')
      .mockImplementation((...parts: unknown[]) => void errors.push(parts.join(' ')));
    const server = bareServer(endpoint, 'pets-bare', 'control-bare', newId);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/pets`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
        body: JSON.stringify({ name: 'Load', categoryId: 1 }),
      });
      return { status: answer.status, body: (await answer.json()) as { id?: number }, errors };
    } finally {
      spy.mockRestore();
      server.close();
    }
  }

  it('draws another id when the one it drew is taken (two creates in a millisecond), as createPet does', async () => {
    const ids = [7001, 7001, 7002];
    const first = await create(store.endpoint, () => 7001);
    expect(first.status).toBe(201);
    const second = await create(store.endpoint, () => ids.shift()!);
    expect(second).toMatchObject({ status: 201, body: { id: 7002 }, errors: [] });
  });

  it('answers a store it cannot reach 503 and writes what failed to the error log', async () => {
    const failed = await create('http://127.0.0.1:1');
    expect(failed.status).toBe(503);
    expect(failed.errors).toEqual([expect.stringMatching(/"server":"bare".*"error":".*ECONNREFUSED/)]);
  });
});
