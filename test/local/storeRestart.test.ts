/**
 * The embedded store killed and restarted under the running local API: requests in the gap get a
 * fast 503 (none hangs), and every pet acknowledged with 201 is readable afterwards, listed once.
 */
import dynalite from 'dynalite';
import { mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { STORE_BUDGET_MS } from '../../lib/store/deadline.ts';
import type { Pet } from '../../lib/domain/schemas.ts';
import { startLocalApi, type LocalApi } from '../../local/server.ts';

const KEY = 'restart-test-key-0123456789';
const BOUND_MS = STORE_BUDGET_MS + 2_000;
const dir = mkdtempSync(join(tmpdir(), 'petstore-restart-'));
let store: Server | undefined;
let api: LocalApi | undefined;

async function startStore(port = 0): Promise<number> {
  const server = dynalite({ path: dir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 }) as unknown as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  store = server;
  return (server.address() as AddressInfo).port;
}

/** Like a crash: open connections are cut, the process's LevelDB handle is closed. */
async function killStore(): Promise<void> {
  const server = store;
  store = undefined;
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
}

afterAll(async () => {
  await api?.close();
  await killStore();
});

describe('killing the store under the local API', () => {
  it('answers 503 fast while it is down, and keeps every pet it acknowledged', async () => {
    const port = await startStore();
    Object.assign(process.env, {
      DYNAMODB_ENDPOINT: `http://127.0.0.1:${port}`,
      PETSTORE_API_KEYS: KEY,
      PETSTORE_CURSOR_SECRET: 'restart-test-cursor-secret',
      TABLE_NAME: 'pets-restart',
      CONTROL_TABLE_NAME: 'control-restart',
    });
    api = await startLocalApi({ port: 0, quiet: true });
    const url = api.url;
    const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
    const create = async (i: number) => {
      const started = Date.now();
      const res = await fetch(`${url}/pets`, {
        method: 'POST',
        headers: { ...headers, 'Idempotency-Key': `pet-${i}` },
        body: JSON.stringify({ name: `Pet ${i}`, categoryId: 1 }),
      });
      return {
        i,
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        body: (await res.json()) as Pet,
        ms: Date.now() - started,
      };
    };

    const answers = [];
    for (let i = 0; i < 10; i++) answers.push(await create(i));
    await killStore();
    const during = await Promise.all(Array.from({ length: 5 }, (_, j) => create(10 + j)));
    answers.push(...during);
    await startStore(port);
    for (let i = 15; i < 25; i++) answers.push(await create(i));

    for (const answer of answers) {
      expect(answer.ms).toBeLessThan(BOUND_MS);
      if (answer.status !== 201)
        expect(answer).toMatchObject({ status: 503, retryAfter: '1', body: { code: 'SERVICE_UNAVAILABLE' } });
    }
    expect(during.every((answer) => answer.status === 503)).toBe(true);
    const acknowledged = answers.filter((answer) => answer.status === 201);
    expect(acknowledged.length).toBeGreaterThanOrEqual(20);

    for (const { body } of acknowledged) {
      const res = await fetch(`${url}/pets/${body.id}`, { headers });
      expect(await res.json()).toEqual(body);
    }
    const listed = (await (await fetch(`${url}/pets?limit=100`, { headers })).json()) as Pet[];
    expect([...listed].sort((a, b) => a.id - b.id)).toEqual(
      acknowledged.map((a) => a.body).sort((a, b) => a.id - b.id),
    );

    // The creates refused while the store was down succeed on retry with their key, once each.
    const retried = await Promise.all(during.map((answer) => create(answer.i)));
    expect(retried.every((answer) => answer.status === 201)).toBe(true);
    const after = (await (await fetch(`${url}/pets?limit=100`, { headers })).json()) as Pet[];
    expect(after).toHaveLength(acknowledged.length + during.length);
  });
});
