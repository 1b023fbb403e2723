/**
 * The local API knows its own store: after a kill -9 another server may take the port recorded in
 * `.data/endpoint`; the next start must not use it (not as a DynamoDB store, not as a crash), but
 * repair and open the data folder's own, so every pet acknowledged is in the data folder's store.
 */
import dynalite from 'dynalite';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pet } from '../../lib/domain/schemas.ts';
import { createDynamoClient } from '../../lib/store/dynamo.ts';
import { startServer, stopCleanly } from '../support/serverProcess.ts';

const KEY = 'identity-test-key-0123456789';
const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
const others: Server[] = [];
afterEach(async () => {
  for (const server of others.splice(0)) await new Promise((resolve) => server.close(resolve));
});

async function createPets(base: string, count: number, prefix: string): Promise<Pet[]> {
  const pets: Pet[] = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${base}/pets`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: `${prefix} ${i}`, categoryId: 1 }),
    });
    expect(res.status).toBe(201);
    pets.push((await res.json()) as Pet);
  }
  return pets;
}

/** A server of another kind listening on `port`. */
async function listenOn(server: Server, port: number): Promise<Server> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  others.push(server);
  return server;
}

/** The endpoint `.data/endpoint` records (a JSON record, or a bare URL as older versions wrote it). */
function recordedEndpoint(endpointFile: string): string {
  const text = readFileSync(endpointFile, 'utf8').trim();
  return text.startsWith('{') ? (JSON.parse(text) as { endpoint: string }).endpoint : text;
}

/** This test process, as `.data/endpoint` records a holder: as if the killed one's id had been reused. */
function claimLiveHolder(endpointFile: string): void {
  const stat = readFileSync(`/proc/${process.pid}/stat`, 'utf8');
  const started = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  writeFileSync(endpointFile, JSON.stringify({ endpoint: recordedEndpoint(endpointFile), pid: process.pid, started }));
}

describe('a stale .data/endpoint whose port another server took after a kill -9', () => {
  // A killed holder's endpoint is judged by whether anything answers there (whatever it is), a live
  // holder's by the store id there: what answers matters only for a live one.
  it.each([
    ['another dynalite, the killed holder recorded', 'dynalite', false],
    ['another dynalite, a live process recorded as holder (its id reused)', 'dynalite', true],
    ['a plain HTTP server, a live process recorded as holder', 'http', true],
  ] as const)(
    '%s: not used, said in one line; every acknowledged pet is in the data folder',
    { timeout: 60_000 },
    async (_case, kind, live) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'petstore-identity-'));
      const env = { PETSTORE_DATA_DIR: dataDir, PETSTORE_API_KEYS: KEY };
      const first = await startServer(env);
      const before = await createPets(first.base, 5, 'Before');
      const endpointFile = join(dataDir, 'endpoint');
      const endpoint = recordedEndpoint(endpointFile);
      first.child.kill('SIGKILL');
      await first.exited;
      if (live) claimLiveHolder(endpointFile);
      const port = Number(new URL(endpoint).port);
      const thief =
        kind === 'dynalite' ? dynalite({ createTableMs: 0 }) : createServer((_req, res) => res.end('hello'));
      await listenOn(thief, port);

      const second = await startServer(env);
      const listed = (await (await fetch(`${second.base}/pets?limit=100`, { headers })).json()) as Pet[];
      const after = await createPets(second.base, 10, 'After');
      await stopCleanly(second);
      expect(second.stdout()).toMatch(/^Store: embedded dynalite http:\/\/127\.0\.0\.1:\d+$/m);
      expect(second.stdout()).not.toContain(endpoint);
      const said = second.stderr().trimEnd().split('\n');
      expect(said[0]).toBe(
        `Store: ${endpointFile} names ${endpoint}, but ${live ? "the store there is not this data folder's" : `its process ${first.child.pid} is gone and another server answers there`}; it is not used.`,
      );
      expect(said[1]).toMatch(/^Store: the last run did not stop cleanly; repaired 0 index entries/);
      expect(said).toHaveLength(2);
      expect(listed.map((pet) => pet.id).sort()).toEqual(before.map((pet) => pet.id).sort());

      // The next start, on the data folder's own store, has all 15; the other store got no table.
      const third = await startServer(env);
      for (const pet of [...before, ...after])
        expect(await (await fetch(`${third.base}/pets/${pet.id}`, { headers })).json()).toEqual(pet);
      third.child.kill('SIGTERM');
      await third.exited;
      if (kind === 'dynalite') {
        const client = createDynamoClient({ endpoint });
        expect((await client.send(new ListTablesCommand({}))).TableNames).toEqual([]);
        client.destroy();
      }
    },
  );
});

describe('a copy of a running data folder (cp -r .data copy), started', () => {
  it('is its own store, said in one line: every write goes to the copy, none to the original', {
    timeout: 60_000,
  }, async () => {
    const original = mkdtempSync(join(tmpdir(), 'petstore-original-'));
    const copy = `${original}-copy`;
    const running = await startServer({ PETSTORE_DATA_DIR: original, PETSTORE_API_KEYS: KEY });
    const before = await createPets(running.base, 5, 'Before');
    cpSync(original, copy, { recursive: true });

    const started = await startServer({ PETSTORE_DATA_DIR: copy, PETSTORE_API_KEYS: KEY });
    const written = await createPets(started.base, 10, 'In the copy');
    const list = async (base: string) =>
      ((await (await fetch(`${base}/pets?limit=100`, { headers })).json()) as Pet[]).map((pet) => pet.name).sort();
    expect(await list(running.base)).toEqual(before.map((pet) => pet.name).sort());
    expect(await list(started.base)).toEqual([...before, ...written].map((pet) => pet.name).sort());
    await stopCleanly(started);
    await stopCleanly(running);
    expect(started.stdout()).toMatch(/^Store: embedded dynalite http:\/\/127\.0\.0\.1:\d+$/m);
    expect(started.stderr().trimEnd().split('\n')).toEqual([
      `Store: ${join(copy, 'endpoint')} was copied from ${original} with the folder; it names that folder's store, not this one's: this copy opens its own.`,
      expect.stringMatching(/^Store: the folder was copied while its store was open; repaired 0 index entries/),
    ]);
    // Each folder, started again, has what was written to it.
    for (const [dataDir, names] of [
      [original, before.map((pet) => pet.name)],
      [copy, [...before, ...written].map((pet) => pet.name)],
    ] as const) {
      const again = await startServer({ PETSTORE_DATA_DIR: dataDir, PETSTORE_API_KEYS: KEY });
      expect(await list(again.base)).toEqual([...names].sort());
      await stopCleanly(again);
      expect(again.stderr()).toBe('');
    }
  });
});
