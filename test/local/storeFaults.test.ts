/**
 * LevelDB errors of the persisted local store (a full disk, files made immutable, a corrupt table)
 * answer the requests they touch with 503 SERVICE_UNAVAILABLE, are said once in the log, and leave
 * the local API serving what it can: dynalite throws them where nothing catches them, so the store
 * runs in a process of its own (local/storeProcess.ts). A corrupt store found at start is refused in
 * one line.
 *
 * The full disk is a real one: a 1 MB tmpfs mounted in a mount namespace of the server's own
 * (`unshare`; as root, or in a user namespace), so nothing is left mounted when it ends.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PET_STATUSES, type Pet } from '../../lib/domain/schemas.ts';
import { expectOneLineRefusal, runCli } from '../support/cli.ts';
import { inParallel } from '../support/history.ts';
import { walkPets } from '../support/http.ts';
import { startServer, stopCleanly, type ServerProcess } from '../support/serverProcess.ts';

const KEY = 'fault-test-key-0123456789';
const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
const isRoot = process.getuid?.() === 0;

const immutable: string[] = [];
afterAll(() => {
  // An immutable folder cannot be removed: a failed test must not leave one behind.
  for (const folder of immutable) spawnSync('chattr', ['-R', '-i', folder]);
});

const create = (base: string, name: string, status?: string) =>
  fetch(`${base}/pets`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name, categoryId: 1, ...(status ? { status } : {}) }),
  });

/** Creates pets one after another until an answer is not 201: the ids acknowledged, and that answer. */
async function createUntilRefused(base: string, most: number): Promise<{ acknowledged: number[]; refused: Response }> {
  const acknowledged: number[] = [];
  for (let n = 0; n < most; n++) {
    const res = await create(base, `Pet ${n} ${'x'.repeat(80)}`);
    if (res.status !== 201) return { acknowledged, refused: res };
    acknowledged.push(((await res.json()) as Pet).id);
  }
  throw new Error(`${most} pets were all stored: the store never failed`);
}

/** A 503 in the Error shape, as a store fault answers. */
async function expectUnavailable(res: Response): Promise<void> {
  expect(res.status).toBe(503);
  expect(await res.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, message: expect.any(String) });
}

/** Retries `attempt` until it answers `status` (a store opened again after its fault was fixed). */
async function eventually(attempt: () => Promise<Response>, status: number, withinMs = 15_000): Promise<Response> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const res = await attempt();
    if (res.status === status || Date.now() > deadline) return res;
    await res.body?.cancel();
    // A pause between probes: the store's child reopens on its own check of the folder, which nothing announces.
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const storeLines = (server: ServerProcess) =>
  server
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('Store:'));

describe('a full disk', () => {
  it('answers the writes it stops with 503, serves reads, lives, and takes writes again once space is freed', {
    timeout: 120_000,
  }, async () => {
    const mount = mkdtempSync(join(tmpdir(), 'petstore-full-'));
    // Mounted in the server's own mount namespace; 900 kB of its 1 MB taken by a filler file.
    const namespace = isRoot
      ? ['unshare', '--mount', '--propagation', 'private']
      : ['unshare', '--user', '--map-root-user', '--mount'];
    const wrapper = [
      ...namespace,
      'sh',
      '-c',
      'mount -t tmpfs -o size=1m tmpfs "$0" && head -c 900000 /dev/zero > "$0/filler" && exec "$@"',
      mount,
    ];
    const server = await startServer({ PETSTORE_DATA_DIR: join(mount, 'data'), PETSTORE_API_KEYS: KEY }, wrapper);

    const { acknowledged, refused } = await createUntilRefused(server.base, 5_000);
    expect(acknowledged.length).toBeGreaterThan(0);
    await expectUnavailable(refused);
    await expectUnavailable(await create(server.base, 'Refused again'));
    // Reads need no space: the pets stored are served.
    const whileFull = await walkPets(`${server.base}/pets?limit=100`, headers);
    expect(whileFull.refused).toBeUndefined();
    expect(whileFull.pets.length).toBeGreaterThanOrEqual(acknowledged.length);
    expect(server.child.exitCode).toBeNull();
    // Said once, however many requests it refused.
    expect(storeLines(server).filter((line) => / failed \(/.test(line))).toEqual([
      expect.stringMatching(
        /^Store: the local store .* failed \(IO error: .*No space left on device\); the requests that touch it answer 503 until it is fixed, the others are served\.$/,
      ),
    ]);

    // The tmpfs as the server's namespace sees it.
    rmSync(join(`/proc/${server.child.pid}/root`, mount, 'filler'));
    const again = await eventually(() => create(server.base, 'After the disk was freed'), 201);
    expect(again.status).toBe(201);
    const listed = new Set((await walkPets(`${server.base}/pets?limit=100`, headers)).pets.map((pet) => pet.id));
    expect(acknowledged.filter((id) => !listed.has(id))).toEqual([]);
    await stopCleanly(server);
  });
});

describe('a store folder made immutable while it serves', () => {
  it('answers writes 503 and serves reads, says it once, takes writes again once writable, and the next start repairs', {
    timeout: 120_000,
  }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'petstore-immutable-'));
    const folder = join(dataDir, 'dynalite');
    const env = { PETSTORE_DATA_DIR: dataDir, PETSTORE_API_KEYS: KEY };
    const server = await startServer(env);
    const before = await Promise.all(Array.from({ length: 10 }, (_, n) => create(server.base, `Before ${n}`)));
    expect(before.map((res) => res.status)).toEqual(Array(10).fill(201));

    // As root only chattr stops a write; for anyone else, taking write permission away does.
    const [lock, unlock] = isRoot
      ? [
          ['chattr', '-R', '+i', folder],
          ['chattr', '-R', '-i', folder],
        ]
      : [
          ['chmod', '-R', 'a-w', folder],
          ['chmod', '-R', 'u+w', folder],
        ];
    immutable.push(folder);
    expect(spawnSync(lock[0]!, lock.slice(1)).status).toBe(0);
    await expectUnavailable(await create(server.base, 'Refused'));
    await expectUnavailable(await create(server.base, 'Refused again'));
    expect((await walkPets(`${server.base}/pets?limit=100`, headers)).pets.length).toBeGreaterThanOrEqual(10);
    expect(server.child.exitCode).toBeNull();
    expect(storeLines(server).filter((line) => / failed \(/.test(line))).toEqual([
      expect.stringMatching(/failed \(IO error: .*(Operation not permitted|Permission denied)\)/),
    ]);

    expect(spawnSync(unlock[0]!, unlock.slice(1)).status).toBe(0);
    expect((await eventually(() => create(server.base, 'After'), 201)).status).toBe(201);
    expect((await walkPets(`${server.base}/pets?limit=100`, headers)).pets.length).toBeGreaterThanOrEqual(11);
    await stopCleanly(server);

    // A write the fault cut may have left its index entry alone: the next start repairs, and says so.
    const next = await startServer(env);
    expect(storeLines(next)).toEqual([
      expect.stringMatching(
        /^Store: the last run had a store fault; repaired \d+ index entries without their pet and \d+ pets missing from their status listing in \d+ ms\.$/,
      ),
    ]);
    await stopCleanly(next);
  });
});

describe('a corrupt table file', () => {
  const PETS = 300;
  const MARK = randomBytes(24).toString('base64url');

  /** A stopped store of PETS pets whose table file (`.ldb`) has 20 bytes flipped in a pet's record. */
  async function corruptStore(): Promise<{ dataDir: string; env: Record<string, string> }> {
    const dataDir = mkdtempSync(join(tmpdir(), 'petstore-corrupt-'));
    const env = { PETSTORE_DATA_DIR: dataDir, PETSTORE_API_KEYS: KEY };
    const server = await startServer(env);
    await inParallel(
      Array.from({ length: PETS }, (_, i) => i),
      8,
      async (i) => {
        const name = i === PETS / 2 ? `Marked ${MARK}` : `Pet ${i} ${'x'.repeat(60)}`;
        expect((await create(server.base, name, PET_STATUSES[i % PET_STATUSES.length])).status).toBe(201);
      },
    );
    await stopCleanly(server);
    // The next open writes what the log holds into a table file.
    await stopCleanly(await startServer(env));
    const folder = join(dataDir, 'dynalite');
    // In a block of pets (the files hold the control table's records too, which no listing reads),
    // found by a random mark in one pet's name, which compression leaves as it is.
    const [table, bytes, at] =
      readdirSync(folder)
        .filter((name) => name.endsWith('.ldb'))
        .map((name) => {
          const bytes = readFileSync(join(folder, name));
          return [join(folder, name), bytes, bytes.indexOf(MARK)] as const;
        })
        .find(([, , at]) => at > 0) ?? [];
    expect(table, 'no table file holds the marked pet').toBeDefined();
    // From the compressed block's tag bytes before it: a flipped literal alone reads back as other
    // text (LevelDB reads without checking block checksums), a flipped tag as a corrupt block.
    for (let i = -10; i < 10; i++) bytes![at! + i]! ^= 0xff;
    writeFileSync(table!, bytes!);
    return { dataDir, env };
  }

  it('is refused at start in one line; kept, its reads answer 503 and the rest is served', {
    timeout: 150_000,
  }, async () => {
    const { dataDir, env } = await corruptStore();
    const folder = join(dataDir, 'dynalite');
    // After a clean stop, the checkpoint finds the file changed.
    expectOneLineRefusal(
      await runCli('local/server.ts', [], { PORT: '0', ...env }, 30_000),
      /^The local store .* was damaged since its last clean stop \(\d+\.ldb changed .*\): .*PETSTORE_KEEP_DAMAGED_STORE=1 to serve what is readable\.$/,
    );
    // After an unclean stop (no checkpoint, the holder's record left), the repair's read finds it.
    rmSync(join(dataDir, 'checkpoint'));
    writeFileSync(join(dataDir, 'endpoint'), JSON.stringify({ endpoint: 'http://127.0.0.1:9', pid: 999_999_999 }));
    expectOneLineRefusal(
      await runCli('local/server.ts', [], { PORT: '0', ...env }, 30_000),
      new RegExp(
        `^The local store ${folder} cannot be read \\(.+\\): restore it from a backup, or move it aside \\(mv ${folder} ${folder}\\.broken\\) to start with an empty store, or set PETSTORE_KEEP_DAMAGED_STORE=1 to serve what is readable\\.$`,
      ),
    );

    const kept = await startServer({ ...env, PETSTORE_KEEP_DAMAGED_STORE: '1' });
    expect(storeLines(kept)).toEqual([
      expect.stringMatching(
        /^Store: The local store .* cannot be read in full \(.+\); the repair stopped there .*; serving what is readable \(PETSTORE_KEEP_DAMAGED_STORE=1\)\.$/,
      ),
    ]);
    const walks = await Promise.all(
      ['', ...PET_STATUSES.map((status) => `&status=${status}`)].map((query) =>
        walkPets(`${kept.base}/pets?limit=100${query}`, headers),
      ),
    );
    const refused = walks.flatMap(({ refused }) => (refused ? [refused] : []));
    expect(refused.length).toBeGreaterThan(0);
    for (const res of refused) await expectUnavailable(res);
    expect(kept.child.exitCode).toBeNull();
    // What the corrupt block does not hold is served: a new pet is stored and read back.
    const res = await eventually(() => create(kept.base, 'After the corruption'), 201);
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as Pet;
    expect((await fetch(`${kept.base}/pets/${id}`, { headers })).status).toBe(200);
    await stopCleanly(kept);
  });
});
