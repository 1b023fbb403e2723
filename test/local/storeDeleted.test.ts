/**
 * The data folder deleted while the local API runs (issue 44, item 6). LevelDB keeps writing to its
 * open files, gone with the folder: creates were answered 201 and lost, and the stop failed on the
 * missing folder. Now the store takes no write from the moment its folder is gone (each write
 * looks first), says so in one line, serves reads from what the run still holds, and the stop
 * writes nothing there and exits 0.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Pet } from '../../lib/domain/schemas.ts';
import { startServer, stopCleanly } from '../support/serverProcess.ts';
import { createPet, expectUnavailable, saidOnStderr, storeLines } from '../support/storeFaults.ts';

const KEY = 'deleted-test-key-0123456789';
const sent = (n: number) => ({ name: `Pet ${n}`, categoryId: 1, status: 'available' as const });
const GONE_LINE =
  /^Store: the local store .*\/dynalite was deleted while the local API ran; writes answer 503 until it is restarted, reads serve what this run still holds, and the next start makes a new, empty store\.$/;

describe('the data folder deleted while the local API runs', () => {
  it('says so in one line, answers every write 503 until the restart, serves reads, and stops with exit 0', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'petstore-deleted-'));
    const server = await startServer({ PETSTORE_DATA_DIR: dataDir, PETSTORE_API_KEYS: KEY });
    const before = (await (await createPet(server.base, KEY, sent(0))).json()) as Pet;

    rmSync(dataDir, { recursive: true });
    for (let n = 1; n <= 5; n++) await expectUnavailable(await createPet(server.base, KEY, sent(n), `key-${n}`));
    await saidOnStderr(server, /was deleted while the local API ran/);
    await expectUnavailable(await createPet(server.base, KEY, sent(6)));
    const read = await fetch(`${server.base}/pets/${before.id}`, { headers: { Authorization: `Bearer ${KEY}` } });
    expect(await read.json()).toEqual(before);

    await stopCleanly(server);
    expect(storeLines(server)).toEqual([expect.stringMatching(GONE_LINE)]);
    // Nothing was made anew where the folder was.
    expect(existsSync(dataDir)).toBe(false);
  });
});
