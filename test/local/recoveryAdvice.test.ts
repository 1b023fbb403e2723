/**
 * Every way out a refusal of the persisted store names works when followed as written: the
 * refusal is given, its advice is carried out literally, and the next start serves.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Pet } from '../../lib/domain/schemas.ts';
import { expectOneLineRefusal, runCli } from '../support/cli.ts';
import { inParallel } from '../support/history.ts';
import { walkPets } from '../support/http.ts';
import { startServer, stopCleanly, type ServerProcess } from '../support/serverProcess.ts';

const KEY = 'advice-test-key-0123456789';
const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
const EARLY = 40;
const LATE = 40;

async function createPets(base: string, count: number, prefix: string): Promise<void> {
  await inParallel(
    Array.from({ length: count }, (_, n) => n),
    8,
    async (n) => {
      const res = await fetch(`${base}/pets`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `${prefix} ${n}`, categoryId: 1 }),
      });
      expect(res.status).toBe(201);
    },
  );
}

async function listAll(base: string): Promise<Pet[]> {
  const { pets, refused } = await walkPets(`${base}/pets?limit=100`, headers);
  expect(refused?.status ?? 200).toBe(200);
  return pets;
}

/**
 * A data folder whose store holds EARLY pets, then LATE more, each part ended by a clean stop; and
 * `cleanCopy`, a copy of its `dynalite/` made after the first stop (`cp -r .data/dynalite backup`).
 */
let original: string;
let cleanCopy: string;
beforeAll(async () => {
  original = mkdtempSync(join(tmpdir(), 'petstore-advice-'));
  const env = { PETSTORE_DATA_DIR: original, PETSTORE_API_KEYS: KEY };
  const first = await startServer(env);
  await createPets(first.base, EARLY, 'Early');
  await stopCleanly(first);
  cleanCopy = join(mkdtempSync(join(tmpdir(), 'petstore-backup-')), 'dynalite');
  cpSync(join(original, 'dynalite'), cleanCopy, { recursive: true });
  const second = await startServer(env);
  await createPets(second.base, LATE, 'Late');
  await stopCleanly(second);
}, 90_000);

function copyOfOriginal(): { dataDir: string; folder: string; env: Record<string, string> } {
  const dataDir = mkdtempSync(join(tmpdir(), 'petstore-advice-'));
  cpSync(original, dataDir, { recursive: true });
  return { dataDir, folder: join(dataDir, 'dynalite'), env: { PETSTORE_DATA_DIR: dataDir, PETSTORE_API_KEYS: KEY } };
}

const start = (env: Record<string, string>) => runCli('local/server.ts', [], { PORT: '0', ...env }, 30_000);

/** Starts on `env`, expects it to serve `pets` pets and take a new one, and stops it cleanly. */
async function expectServes(env: Record<string, string>, pets: number): Promise<ServerProcess> {
  const server = await startServer(env);
  expect((await listAll(server.base)).length).toBe(pets);
  const res = await fetch(`${server.base}/pets`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'After the advice', categoryId: 1 }),
  });
  expect(res.status).toBe(201);
  await stopCleanly(server);
  return server;
}

describe('a checkpoint that is no checkpoint', () => {
  it.each([['null'], ['[]'], ['"text"'], ['{"000005.log": null}'], ['{"000005.log": {"bytes": 1}}'], ['{']])(
    '%s: refused in one line; deleting it, as the line says, starts',
    { timeout: 60_000 },
    async (content) => {
      const { dataDir, env } = copyOfOriginal();
      const checkpoint = join(dataDir, 'checkpoint');
      writeFileSync(checkpoint, content);
      expectOneLineRefusal(
        await start(env),
        `${checkpoint} cannot be read as a checkpoint: delete it (the next clean stop writes a new one).`,
      );
      rmSync(checkpoint);
      expect((await expectServes(env, EARLY + LATE)).stderr()).toBe('');
    },
  );
});

describe('a log damaged after a clean stop', () => {
  it("restoring dynalite/ from a copy made after an earlier clean stop, as the refusal says, starts on the copy's pets", {
    timeout: 90_000,
  }, async () => {
    const { folder, env } = copyOfOriginal();
    const log = readdirSync(folder)
      .filter((name) => name.endsWith('.log'))
      .map((name) => join(folder, name))
      .sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
    truncateSync(log, Math.floor(statSync(log).size / 2));
    expectOneLineRefusal(
      await start(env),
      new RegExp(
        `was damaged since its last clean stop .*\\. Restore ${folder} from a copy of it made after a clean stop \\(the copy carries its checkpoint\\), or set PETSTORE_KEEP_DAMAGED_STORE=1 to serve what is readable\\.$`,
      ),
    );
    rmSync(folder, { recursive: true });
    cpSync(cleanCopy, folder, { recursive: true });
    const restored = await expectServes(env, EARLY);
    expect(restored.stderr().trimEnd().split('\n')).toEqual([
      `Store: ${folder} is not the store of its last clean stop but a copy of an earlier one, intact against the checkpoint it carries: serving it.`,
    ]);
    expect((await expectServes(env, EARLY + 1)).stderr()).toBe('');
  });

  it('a restored copy that is itself damaged is refused', { timeout: 60_000 }, async () => {
    const { folder, env } = copyOfOriginal();
    rmSync(folder, { recursive: true });
    cpSync(cleanCopy, folder, { recursive: true });
    const log = readdirSync(folder).find((name) => name.endsWith('.ldb') || name.endsWith('.log'))!;
    const bytes = Buffer.from(randomBytes(statSync(join(folder, log)).size));
    writeFileSync(join(folder, log), bytes);
    expectOneLineRefusal(await start(env), /was damaged since its last clean stop/);
  });
});

describe('a table file of garbage after an unclean stop', () => {
  /** A copy of the original, started and killed (so its log went into a table file), each table file then overwritten with random bytes. */
  async function garbageAfterKill() {
    const copy = copyOfOriginal();
    const server = await startServer(copy.env);
    server.child.kill('SIGKILL');
    await server.exited;
    const tables = readdirSync(copy.folder).filter((name) => name.endsWith('.ldb'));
    expect(tables.length).toBeGreaterThan(0);
    for (const name of tables)
      writeFileSync(join(copy.folder, name), randomBytes(statSync(join(copy.folder, name)).size));
    const refusal = new RegExp(
      `^The local store ${copy.folder} cannot be read \\(Corruption: .+\\): restore it from a backup, or move it aside \\(mv ${copy.folder} ${copy.folder}\\.broken\\) to start with an empty store, or set PETSTORE_KEEP_DAMAGED_STORE=1 to serve what is readable\\.$`,
    );
    expectOneLineRefusal(await start(copy.env), refusal);
    return copy;
  }

  it('PETSTORE_KEEP_DAMAGED_STORE=1, as the refusal says, serves what is readable and says it in one line', {
    timeout: 90_000,
  }, async () => {
    const { folder, env } = await garbageAfterKill();
    const kept = await expectServes({ ...env, PETSTORE_KEEP_DAMAGED_STORE: '1' }, 0);
    expect(kept.stderr().trimEnd().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Store: The local store ${folder} cannot be read \\(Corruption: .+\\); LevelDB's repair kept what it could read and moved what it could not to ${folder}/lost; serving the 0 pets readable \\(PETSTORE_KEEP_DAMAGED_STORE=1\\), repaired 0 index entries .*\\.$`,
        ),
      ),
    ]);
    // What was kept is the new clean state.
    expect((await expectServes(env, 1)).stderr()).toBe('');
  });

  it('moving it aside, as the refusal says, starts with an empty store', { timeout: 90_000 }, async () => {
    const { folder, env } = await garbageAfterKill();
    renameSync(folder, `${folder}.broken`);
    const empty = await expectServes(env, 0);
    expect(empty.stderr()).toMatch(/^Store: the last run did not stop cleanly; repaired 0 index entries .*\.\n$/);
  });

  it('restoring it from a backup, as the refusal says, starts on the backup', { timeout: 90_000 }, async () => {
    const { folder, env } = await garbageAfterKill();
    rmSync(folder, { recursive: true });
    cpSync(cleanCopy, folder, { recursive: true });
    const restored = await expectServes(env, EARLY);
    expect(restored.stderr()).toMatch(/^Store: the last run did not stop cleanly; repaired 0 index entries/);
  });
});
