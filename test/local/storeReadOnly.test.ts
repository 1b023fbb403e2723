/**
 * A data folder made read-only while the local API creates (issue 44, item 3): a create its fault
 * cut may leave its status-index entry without its pet (a phantom, listed by status, 404 by id),
 * so a fault leaves `.data/store-faulted` and the next start repairs. The fault that calls for the
 * marker kept it from being written, and it never was: the phantoms stayed. It is now written as
 * soon as the folder takes it again (local/storeFaultMarker.ts).
 *
 * The whole data folder takes no write (immutable as root, for whom `chmod a-w` changes nothing;
 * without write permission otherwise), while 8 clients create, each going on to its next pet
 * after a 503 as a client without retries would, so that a phantom is not healed by a retry.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PET_STATUSES } from '../../lib/domain/schemas.ts';
import { walkPets } from '../support/http.ts';
import { startServer, stopCleanly } from '../support/serverProcess.ts';
import { CreateLoad, lockFolder, storeLines, unlockFolder } from '../support/storeFaults.ts';

const KEY = 'read-only-test-key-0123456789';
const headers = { Authorization: `Bearer ${KEY}` };

describe('a data folder made read-only while 8 clients create', () => {
  it('is marked faulted once writable again: the next start repairs, and every pet a status lists is found by id', {
    timeout: 90_000,
  }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'petstore-read-only-'));
    const env = { PETSTORE_DATA_DIR: dataDir, PETSTORE_API_KEYS: KEY };
    const server = await startServer(env);
    const load = new CreateLoad(server.base, KEY, { clients: 8, retrySameKey: false, prefix: 'read-only' });
    const clients = load.run();
    await load.until(() => load.acknowledged.length >= 40);
    lockFolder(dataDir);
    await load.until(() => load.refused >= 16);
    unlockFolder(dataDir);
    const givenBack = load.acknowledged.length;
    await load.until(() => load.acknowledged.length >= givenBack + 40);
    load.stop();
    await clients;
    expect(load.unexpected).toEqual([]);
    await stopCleanly(server);

    const next = await startServer(env);
    expect(storeLines(next)).toEqual([
      expect.stringMatching(
        /^Store: the last run had a store fault; repaired \d+ index entries without their pet and \d+ pets missing from their status listing in \d+ ms\.$/,
      ),
    ]);
    const listed = new Set((await walkPets(`${next.base}/pets?limit=100`, headers)).pets.map((pet) => pet.id));
    for (const { pet } of load.acknowledged) expect(listed.has(pet.id)).toBe(true);
    // No phantom: each pet a status lists is listed unfiltered and found by id.
    for (const status of PET_STATUSES) {
      const { pets } = await walkPets(`${next.base}/pets?limit=100&status=${status}`, headers);
      for (const pet of pets) {
        expect(listed.has(pet.id)).toBe(true);
        expect((await fetch(`${next.base}/pets/${pet.id}`, { headers })).status).toBe(200);
      }
    }
    console.log(`read-only fault: ${storeLines(next)[0]}`);
    await stopCleanly(next);
  });
});
