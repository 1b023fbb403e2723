/**
 * The persisted local store after kill -9: the next start shows every acknowledged pet and no
 * phantom (a pet a status listing returns but that is not found by id nor listed unfiltered).
 * dynalite writes a put's index entry before its item, so a kill between them leaves one; the
 * start after an unclean stop rolls it forward (local/storeRepair.ts).
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { Level } from 'level';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { PET_STATUSES, type Pet } from '../../lib/domain/schemas.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { DEFAULT_STATUS_INDEX_SHARDS, STATUS_INDEX, petsTable, statusShardOf } from '../../lib/store/table.ts';
import { startLocalApi, type LocalApi } from '../../local/server.ts';
import { ensurePetsTable, startEmbeddedStore } from '../../local/embeddedStore.ts';
import { inParallel } from '../support/history.ts';
import { walkPets } from '../support/http.ts';

const KEY = 'crash-test-key-0123456789';
const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-crash-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * A GET as a careful client makes it: a 503 (the store budget spent while the machine runs other
 * test files beside this one) is retried after its Retry-After, a few times; only then is it an answer.
 */
async function getRetrying(url: string): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(url, { headers });
    if (res.status !== 503 || attempt === 5) return res;
    await res.body?.cancel();
    // The Retry-After the answer asked for, as a careful client waits it: not an ordering.
    await new Promise((resolve) => setTimeout(resolve, 1_000 * Number(res.headers.get('retry-after') ?? 1)));
  }
}

/** Every pet of a listing, following `Link: rel="next"` to the last page, each page answered 200. */
async function listAll(url: string): Promise<Pet[]> {
  const { pets, refused } = await walkPets(url, headers, getRetrying);
  expect(refused?.status ?? 200).toBe(200);
  return pets;
}

/** What a listing check finds wrong: pets a status lists but that are not readable or not listed unfiltered. */
interface Findings {
  phantoms: number[];
  unreadable: number[];
}

/**
 * Walks every listing of the API at `url` and reads by id every pet a status listing returns,
 * except those `alreadyRead` (pets are immutable, and a phantom is a pet never read before).
 */
async function findPhantoms(
  url: string,
  alreadyRead = new Set<number>(),
): Promise<Findings & { listed: Map<number, Pet> }> {
  const listed = new Map((await listAll(`${url}/pets?limit=100`)).map((pet) => [pet.id, pet]));
  const byStatus = (
    await Promise.all(PET_STATUSES.map((status) => listAll(`${url}/pets?limit=100&status=${status}`)))
  ).flat();
  const phantoms = byStatus.filter((pet) => !listed.has(pet.id)).map((pet) => pet.id);
  const unreadable: number[] = [];
  await inParallel(
    byStatus.filter((pet) => !alreadyRead.has(pet.id)),
    16,
    async (pet) => {
      const res = await getRetrying(`${url}/pets/${pet.id}`);
      if (res.status !== 200 || JSON.stringify(await res.json()) !== JSON.stringify(pet)) unreadable.push(pet.id);
      else alreadyRead.add(pet.id);
    },
  );
  return { listed, phantoms, unreadable };
}

/**
 * A data folder whose store holds `pet` as the local API stores it (with its status-index shard key),
 * then the LevelDB keys from `prefix` on deleted behind dynalite's back (exactly one is expected).
 * `unclean`: the endpoint file of a run that died is left, answering no more.
 */
async function storeMissing(pet: Pet, prefix: string, unclean: boolean): Promise<string> {
  const dataDir = tempDir();
  const levelDir = join(dataDir, 'dynalite');
  const store = await startEmbeddedStore({ path: levelDir });
  await ensurePetsTable(store.endpoint, 'pets');
  const documents = createDocumentClient({ endpoint: store.endpoint });
  await documents.send(
    new PutCommand({
      TableName: 'pets',
      Item: {
        ...pet,
        [petsTable.statusIndex.partitionKey.name]: statusShardOf(pet.status!, pet.id, DEFAULT_STATUS_INDEX_SHARDS),
      },
    }),
  );
  documents.destroy();
  await store.close();
  const db = new Level<string, unknown>(levelDir, { valueEncoding: 'json' });
  const keys = await db.keys({ gte: prefix, lt: `${prefix}\uffff` }).all();
  expect(keys).toHaveLength(1);
  await db.del(keys[0] as string);
  await db.close();
  if (unclean) writeFileSync(join(dataDir, 'endpoint'), store.endpoint);
  return dataDir;
}

/** The local API started in this process on `dataDir`, and what its start said on stderr. */
async function startOn(dataDir: string): Promise<{ api: LocalApi; said: string }> {
  const notices = vi.spyOn(console, 'error').mockImplementation(() => {});
  Object.assign(process.env, { PETSTORE_DATA_DIR: dataDir, PETSTORE_API_KEYS: KEY });
  // The local API puts its store's endpoint in process.env, as it does for its handlers: not the next start's.
  for (const name of ['DYNAMODB_ENDPOINT', 'PETSTORE_IN_MEMORY', 'TABLE_NAME', 'CONTROL_TABLE_NAME'])
    delete process.env[name];
  try {
    return { api: await startLocalApi({ port: 0, quiet: true }), said: notices.mock.calls.flat().join('\n') };
  } finally {
    notices.mockRestore();
  }
}

describe("an index entry without its pet (what a kill between dynalite's two writes leaves)", () => {
  let api: LocalApi | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  it.each([
    [
      'after an unclean stop (its endpoint file left behind)',
      true,
      /did not stop cleanly; repaired 1 index entries without their pet and 0 pets missing from their status listing in \d+ ms/,
    ],
    [
      'once, in a store kept from before repairs (stopped cleanly since)',
      false,
      /first check of a store kept from before repairs; repaired 1 index entries/,
    ],
  ])('is rolled forward at the start %s', async (_case, unclean, notice) => {
    const pet: Pet = { id: 4_242_424_242, name: 'Half-written', categoryId: 7, status: 'pending' };
    // The item removed behind the index's back, as a kill after the index write and before the item's leaves it.
    const dataDir = await storeMissing(pet, 'item-pets~', unclean);
    let said: string;
    ({ api, said } = await startOn(dataDir));

    const res = await fetch(`${api.url}/pets/${pet.id}`, { headers });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(pet);
    const { listed, phantoms, unreadable } = await findPhantoms(api.url);
    expect({ phantoms, unreadable }).toEqual({ phantoms: [], unreadable: [] });
    expect([...listed.values()]).toEqual([pet]);
    expect(said).toMatch(notice);
    // Checked once: a clean restart repairs nothing and says nothing.
    await api.close();
    let saidAgain: string;
    ({ api, said: saidAgain } = await startOn(dataDir));
    expect(saidAgain).not.toMatch(/repaired/);
  });
});

describe('a pet without its index entry (what a damaged log kept with PETSTORE_KEEP_DAMAGED_STORE=1 can leave)', () => {
  let api: LocalApi | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  it('is put back in its status listing at the start after an unclean stop', async () => {
    const pet: Pet = { id: 4_343_434_343, name: 'Unindexed', categoryId: 7, status: 'sold' };
    // The index entry removed behind the table's back: the pet is listed unfiltered, not by its status.
    const dataDir = await storeMissing(pet, `index-global~pets~${STATUS_INDEX}~`, true);
    let said: string;
    ({ api, said } = await startOn(dataDir));

    expect(said).toMatch(
      /did not stop cleanly; repaired 0 index entries without their pet and 1 pets missing from their status listing/,
    );
    expect(await listAll(`${api.url}/pets?limit=100&status=sold`)).toEqual([pet]);
    expect(await listAll(`${api.url}/pets?limit=100`)).toEqual([pet]);
  });
});

type Child = ChildProcessByStdio<null, Readable, Readable>;
interface Running {
  child: Child;
  url: string;
  /** Everything it wrote to stderr so far. */
  errors: () => string;
  exited: Promise<void>;
}

/** `npm start`'s process (without npm) on a free port, persisting under `dataDir`. */
async function startServer(dataDir: string): Promise<Running> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: '0',
    PETSTORE_DATA_DIR: dataDir,
    PETSTORE_API_KEYS: KEY,
  };
  for (const name of ['DYNAMODB_ENDPOINT', 'PETSTORE_IN_MEMORY', 'TABLE_NAME', 'CONTROL_TABLE_NAME']) delete env[name];
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/server.ts'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  let errors = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += String(chunk);
      const found = /listening on (\S+)/.exec(output)?.[1];
      if (found) resolve(found);
    });
    child.stderr.on('data', (chunk) => (errors += String(chunk)));
    void exited.then(() => reject(new Error(`server exited before listening:\n${output}\n${errors}`)));
  });
  return { child, url, errors: () => errors, exited };
}

const children: Child[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

const CYCLES = 10;
const CONNECTIONS = 32;
const ACKNOWLEDGED_BEFORE_KILL = 60;

/** Creates pets on `CONNECTIONS` connections until the server dies; the 201s, acknowledged as answered. */
async function burstUntilKilled(server: Running, cycle: number): Promise<Pet[]> {
  const acknowledged: Pet[] = [];
  let sent = 0;
  const connection = async () => {
    for (;;) {
      const n = sent++;
      const body = {
        name: `Pet ${cycle}.${n}`,
        categoryId: 1 + (n % 5),
        status: PET_STATUSES[n % PET_STATUSES.length],
      };
      let res: Response;
      try {
        res = await fetch(`${server.url}/pets`, { method: 'POST', headers, body: JSON.stringify(body) });
        const answered = (await res.json()) as Pet;
        // A 503 (the store slow on a loaded machine) is no acknowledgement; anything else is a fault.
        if (res.status === 201) acknowledged.push(answered);
        else if (res.status !== 503) throw new Error(`create answered ${res.status}: ${JSON.stringify(answered)}`);
      } catch (error) {
        if (server.child.signalCode === 'SIGKILL' || server.child.killed) return;
        throw error;
      }
      // Killed at once while the other connections' creates are in flight, some mid-write.
      if (acknowledged.length === ACKNOWLEDGED_BEFORE_KILL) server.child.kill('SIGKILL');
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, connection));
  await server.exited;
  return acknowledged;
}

describe('kill -9 of the persisted local API during a burst of creates', () => {
  it(`keeps every acknowledged pet and shows no phantom at the next start, ${CYCLES} times`, {
    timeout: 360_000,
  }, async () => {
    const dataDir = tempDir();
    const acknowledged = new Map<number, Pet>();
    const alreadyRead = new Set<number>();
    const report: string[] = [];
    const failures: string[] = [];
    let server = await startServer(dataDir);
    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      const acked = await burstUntilKilled(server, cycle);
      for (const pet of acked) acknowledged.set(pet.id, pet);
      server = await startServer(dataDir);
      const { listed, phantoms, unreadable } = await findPhantoms(server.url, alreadyRead);
      const lost = [...acknowledged.values()].filter(
        (pet) => JSON.stringify(listed.get(pet.id)) !== JSON.stringify(pet),
      );
      await inParallel(acked, 16, async (pet) => {
        const res = await getRetrying(`${server.url}/pets/${pet.id}`);
        if (res.status !== 200 || JSON.stringify(await res.json()) !== JSON.stringify(pet)) lost.push(pet);
      });
      // Read last: the notice, written before the server listens, comes on another pipe than its address.
      const repaired = /repaired (\d+) index entries/.exec(server.errors())?.[1] ?? 'no repair';
      report.push(
        `cycle ${cycle}: ${acked.length} acknowledged, ${listed.size} listed, repaired: ${repaired}, ` +
          `phantoms: ${phantoms.length}, unreadable: ${unreadable.length}, lost: ${lost.length}`,
      );
      if (phantoms.length || unreadable.length || lost.length) failures.push(report.at(-1) as string);
    }
    // A clean stop, then a start that repairs nothing.
    server.child.kill('SIGTERM');
    await server.exited;
    server = await startServer(dataDir);
    server.child.kill('SIGTERM');
    await server.exited;
    const cleanRestart = server.errors();

    console.log(report.join('\n'));
    expect(failures).toEqual([]);
    expect(cleanRestart).not.toMatch(/did not stop cleanly/);
  });
});
