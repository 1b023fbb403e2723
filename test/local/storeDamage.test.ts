/**
 * Damage to the persisted store between a clean stop and the next start is never served silently:
 * a cut, flipped or deleted write-ahead log (LevelDB replays what is left without a word) refuses the
 * start in one line naming the file and what changed, unless PETSTORE_KEEP_DAMAGED_STORE=1, which
 * says it in one line and serves what is readable.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Pet } from '../../lib/domain/schemas.ts';
import { expectOneLineRefusal, runCli } from '../support/cli.ts';
import { inParallel } from '../support/history.ts';
import { walkPets } from '../support/http.ts';
import { startServer, stopCleanly } from '../support/serverProcess.ts';

const KEY = 'damage-test-key-0123456789';
const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
const PETS = 300;

/** Every pet of the unfiltered listing at `base`, each page answered 200. */
async function listAll(base: string): Promise<Pet[]> {
  const { pets, refused } = await walkPets(`${base}/pets?limit=100`, headers);
  expect(refused?.status ?? 200).toBe(200);
  return pets;
}

/** A data folder whose store holds PETS pets, stopped cleanly: made once, copied for each test. */
let original: string;
beforeAll(async () => {
  original = (await storeOfPets()).dataDir;
}, 60_000);

/** A copy of the original store of PETS pets, in a folder of its own. */
function copyOfStore(): { dataDir: string; env: Record<string, string> } {
  const dataDir = mkdtempSync(join(tmpdir(), 'petstore-damage-'));
  cpSync(original, dataDir, { recursive: true });
  return { dataDir, env: { PETSTORE_DATA_DIR: dataDir, PETSTORE_API_KEYS: KEY } };
}

async function storeOfPets(): Promise<{ dataDir: string; env: Record<string, string> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'petstore-damage-'));
  const env = { PETSTORE_DATA_DIR: dataDir, PETSTORE_API_KEYS: KEY };
  const server = await startServer(env);
  await inParallel(
    Array.from({ length: PETS }, (_, n) => n),
    8,
    async (n) => {
      const res = await fetch(`${server.base}/pets`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `Pet ${n}`, categoryId: 1 }),
      });
      expect(res.status).toBe(201);
    },
  );
  await stopCleanly(server);
  return { dataDir, env };
}

/** The store's largest write-ahead log: where the pets written since the last compaction are. */
function largestLog(dataDir: string): string {
  const folder = join(dataDir, 'dynalite');
  const logs = readdirSync(folder)
    .filter((name) => name.endsWith('.log'))
    .map((name) => join(folder, name));
  return logs.sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
}

const DAMAGE: ReadonlyArray<[string, (log: string) => void, RegExp]> = [
  [
    'cut in half',
    (log) => truncateSync(log, Math.floor(statSync(log).size / 2)),
    /\d+\.log is cut from \d+ to \d+ bytes/,
  ],
  [
    'with 20 bytes flipped',
    (log) => {
      const bytes = readFileSync(log);
      for (let i = 0; i < 20; i++) bytes[Math.floor(bytes.length / 3) + i * 97]! ^= 0xff;
      writeFileSync(log, bytes);
    },
    /\d+\.log changed \(\d+ bytes then, \d+ now\)/,
  ],
  ['deleted', (log) => rmSync(log), /\d+\.log \(\d+ bytes\) is missing/],
];

describe('a write-ahead log damaged after a clean stop', () => {
  it.each(DAMAGE)(
    '%s: the start refuses in one line; PETSTORE_KEEP_DAMAGED_STORE=1 says it and serves what is readable',
    { timeout: 90_000 },
    async (_case, damage, says) => {
      const { dataDir, env } = copyOfStore();
      damage(largestLog(dataDir));

      const refused = await runCli('local/server.ts', [], { PORT: '0', ...env }, 30_000);
      expectOneLineRefusal(
        refused,
        new RegExp(
          `^The local store ${join(dataDir, 'dynalite')} was damaged since its last clean stop \\(${says.source}\\): .* set PETSTORE_KEEP_DAMAGED_STORE=1 to serve what is readable\\.$`,
        ),
      );
      // Refused again until the user decides: the refusal removed nothing.
      expect((await runCli('local/server.ts', [], { PORT: '0', ...env }, 30_000)).code).toBe(1);

      const kept = await startServer({ ...env, PETSTORE_KEEP_DAMAGED_STORE: '1' });
      const said = kept.stderr().trimEnd().split('\n');
      expect(said).toEqual([
        expect.stringMatching(
          new RegExp(
            `^Store: The local store .* \\(${says.source}\\).*; serving the \\d+ pets readable \\(PETSTORE_KEEP_DAMAGED_STORE=1\\), repaired \\d+ index entries .* in \\d+ ms\\.$`,
          ),
        ),
      ]);
      const readable = await listAll(kept.base);
      expect(readable.length).toBeLessThan(PETS);
      // The count said is the count served.
      expect(said[0]).toContain(`serving the ${readable.length} pets readable`);
      await stopCleanly(kept);

      // What the user kept is the new clean state: the next start says nothing.
      const next = await startServer(env);
      expect(next.stderr()).toBe('');
      expect((await listAll(next.base)).length).toBe(readable.length);
      next.child.kill('SIGTERM');
      await next.exited;
    },
  );

  it('a clean stop and start says nothing and serves every pet', { timeout: 60_000 }, async () => {
    const { env } = copyOfStore();
    const server = await startServer(env);
    expect((await listAll(server.base)).length).toBe(PETS);
    expect(server.stderr()).toBe('');
    server.child.kill('SIGTERM');
    await server.exited;
  });
});
