/**
 * Two `npm start` on one data folder at the same instant: one holds the store, the other shares it
 * (never "held by another process" from the race), and the sharer stops in one line, exit 1, once
 * the holder stops: from then the recorded port may be anyone's.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Pet } from '../../lib/domain/schemas.ts';
import { spawnServer } from '../support/serverProcess.ts';

const KEY = 'shared-test-key-0123456789';
const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
const ROUNDS = 6;
/** The sharer's watch looks every 200 ms; its stop is as quick as the holder's. */
const SHARER_STOP_BOUND_MS = 2_000;

describe('two npm start on one data folder at the same instant', () => {
  it(`one holds the store, the other shares it, and stops in one line when the holder stops, ${ROUNDS} of ${ROUNDS}`, {
    timeout: 180_000,
  }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'petstore-shared-'));
    const env = { PETSTORE_DATA_DIR: dataDir, PETSTORE_API_KEYS: KEY };
    const failures: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const pair = [spawnServer(env), spawnServer(env)];
      const started = await Promise.allSettled(pair.map((server) => server.url));
      const refused = started.flatMap((result) =>
        result.status === 'rejected' ? [String(result.reason).split('\n').slice(0, 3).join(' ')] : [],
      );
      if (refused.length) {
        failures.push(`round ${round}: ${refused.join('; ')}`);
        for (const server of pair) server.child.kill('SIGKILL');
        continue;
      }
      const holder = pair.find((server) => /^Store: embedded dynalite/m.test(server.stdout()));
      const sharer = pair.find((server) =>
        /^Store: the store of the local API already running on /m.test(server.stdout()),
      );
      expect(holder && sharer && holder !== sharer, pair.map((server) => server.stdout()).join('\n')).toBe(true);
      const [holderUrl, sharerUrl] = [await holder!.url, await sharer!.url];
      // One store: what one creates, the other reads.
      const res = await fetch(`${sharerUrl}/pets`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `Shared ${round}`, categoryId: 1 }),
      });
      expect(res.status).toBe(201);
      const pet = (await res.json()) as Pet;
      expect(await (await fetch(`${holderUrl}/pets/${pet.id}`, { headers })).json()).toEqual(pet);

      holder!.child.kill('SIGTERM');
      const stopped = Date.now();
      expect((await holder!.exited).code).toBe(0);
      // A safety timeout, the bound under test: a sharer still running at it has failed.
      const { code, at } = await Promise.race([
        sharer!.exited,
        new Promise<{ code: string; at: number }>((resolve) =>
          setTimeout(() => resolve({ code: 'still running', at: Date.now() }), SHARER_STOP_BOUND_MS),
        ),
      ]);
      const said = sharer!.stderr().trimEnd().split('\n');
      if (
        code !== 1 ||
        said.length !== 1 ||
        !/^The local API holding the store of .* has stopped; this one, which shared it, stops too/.test(said[0]!)
      ) {
        failures.push(
          `round ${round}: sharer ${code} after ${at - stopped} ms, said ${JSON.stringify(sharer!.stderr())}`,
        );
        sharer!.child.kill('SIGKILL');
      }
    }
    expect(failures).toEqual([]);
  });
});
