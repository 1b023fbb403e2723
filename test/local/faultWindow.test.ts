/**
 * Nothing acknowledged is lost across a write fault of the persisted local store (issue 44, item 1).
 * LevelDB keeps its place in its log past an append that failed, so the appends that succeed after
 * it (once space or permissions are given back) are dropped by the next open: a store that took
 * writes between its folder becoming writable and its reopening lost every pet it acknowledged then.
 * The store's process now takes no write from the first failed one until a reopened store serves
 * (local/storeWriteGate.mjs); meanwhile writes answer 503, which the clients here retry at once with
 * the same Idempotency-Key.
 *
 * Five rounds, each on a new data folder: 8 clients create through the local API over HTTP; the
 * disk is filled to its last byte (a tmpfs) or the data folder made immutable (read-only without
 * root), then given back, and the clients go on until 80 more pets are acknowledged. After a clean
 * stop and a new start, every 201 is listed with its body, and every key replayed answers its pet.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Pet } from '../../lib/domain/schemas.ts';
import { inParallel } from '../support/history.ts';
import { walkPets } from '../support/http.ts';
import { startServer, stopCleanly } from '../support/serverProcess.ts';
import {
  CreateLoad,
  createPet,
  fullDiskNamespace,
  lockFolder,
  unlockFolder,
  type FullDiskNamespace,
} from '../support/storeFaults.ts';

const KEY = 'fault-window-key-0123456789';
const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
const CLIENTS = 8;
const BEFORE_FAULT = 30;
const AFTER_GIVEN_BACK = 80;
const ROUNDS = ['full disk', 'immutable folder', 'full disk', 'immutable folder', 'full disk'] as const;

interface RoundFigures {
  acknowledged: number;
  listed: number;
  refused: number;
  replayedAsFirst: number;
}

async function round(number: number, fault: (typeof ROUNDS)[number]): Promise<RoundFigures> {
  const disk: FullDiskNamespace | undefined = fault === 'full disk' ? await fullDiskNamespace(16 << 20) : undefined;
  const dataDir = disk ? join(disk.mount, 'data') : mkdtempSync(join(tmpdir(), 'petstore-window-'));
  const env = { PETSTORE_DATA_DIR: dataDir, PETSTORE_API_KEYS: KEY };
  try {
    const server = await startServer(env, disk?.wrapper);
    const load = new CreateLoad(server.base, KEY, { clients: CLIENTS, retrySameKey: true, prefix: `round-${number}` });
    const clients = load.run();
    await load.until(() => load.acknowledged.length >= BEFORE_FAULT);
    if (disk) disk.fill();
    else lockFolder(dataDir);
    // Every client has been refused at least once on average: the store's writes have failed.
    await load.until(() => load.refused >= CLIENTS);
    if (disk) disk.free();
    else unlockFolder(dataDir);
    const givenBack = load.acknowledged.length;
    await load.until(() => load.acknowledged.length >= givenBack + AFTER_GIVEN_BACK);
    load.stop();
    await clients;
    expect(load.unexpected).toEqual([]);
    await stopCleanly(server);

    const next = await startServer(env, disk?.wrapper);
    const listed = new Map((await walkPets(`${next.base}/pets?limit=100`, headers)).pets.map((pet) => [pet.id, pet]));
    const kept = load.acknowledged.filter(({ pet }) => JSON.stringify(listed.get(pet.id)) === JSON.stringify(pet));
    let replayedAsFirst = 0;
    await inParallel(load.acknowledged, CLIENTS, async ({ key, sent, pet }) => {
      const res = await createPet(next.base, KEY, sent, key);
      if (res.status === 201 && ((await res.json()) as Pet).id === pet.id) replayedAsFirst++;
    });
    await stopCleanly(next);
    return { acknowledged: load.acknowledged.length, listed: kept.length, refused: load.refused, replayedAsFirst };
  } finally {
    await disk?.close();
  }
}

describe('a write fault given back while 8 clients create', () => {
  it('loses no acknowledged pet: each is listed after a clean restart, and each key replays its first pet', {
    timeout: 120_000,
  }, async () => {
    const figures: (RoundFigures & { fault: string })[] = [];
    for (const [n, fault] of ROUNDS.entries()) figures.push({ fault, ...(await round(n + 1, fault)) });
    for (const [n, { fault, acknowledged, listed, refused, replayedAsFirst }] of figures.entries())
      console.log(
        `round ${n + 1} (${fault}): ${acknowledged} acknowledged, ${listed} listed after the restart, ${replayedAsFirst} keys replayed their first pet, ${refused} answers 503`,
      );
    for (const { acknowledged, listed, replayedAsFirst } of figures)
      expect({ listed, replayedAsFirst }).toEqual({ listed: acknowledged, replayedAsFirst: acknowledged });
  });
});
