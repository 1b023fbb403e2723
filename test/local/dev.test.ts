/**
 * `npm run dev` (scripts/dev.ts) on a copy of the sources (PETSTORE_SOURCE_ROOT), run from the copy
 * so its `.data/` is the copy's: an edit to a handler in the copy is served after one reload, and the
 * data and key from before the reload still answer. The reload time is printed, never asserted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/bundle/bundling.ts';
import { API_BASE_PATH } from '../../lib/domain/routes.ts';
import { BUNDLED_SOURCES } from '../../tools/stage-emulator/src/watch.ts';
import { PROJECT_NODE, commandEnvironment } from '../support/cli.ts';
import { fetchApi } from '../support/http.ts';
import { freePort } from '../support/ports.ts';

/** What the local API runs besides functions/ and lib/: its own folder, the contract's, and the package's module settings. */
const SERVER_SOURCES = [...BUNDLED_SOURCES, 'local', 'contract', 'package.json', 'tsconfig.json', 'openapi.json'];
/** The functional limit on any wait; nothing about time is asserted below it. */
const WAIT_MS = 60_000;
const MISSING_ID = 987654;
const OLD_MESSAGE = `No pet has the id ${MISSING_ID}.`;
const NEW_MESSAGE = `Pet ${MISSING_ID} is not in the inventory.`;

describe('npm run dev', () => {
  let copy: string;
  let dev: ChildProcess;
  let exited: Promise<number | null>;
  const lines: string[] = [];
  let stderr = '';

  /** Polls `probe` until it holds; fails after WAIT_MS saying what it waited for and what dev printed. */
  const until = async (what: string, probe: () => boolean | Promise<boolean>): Promise<void> => {
    const deadline = performance.now() + WAIT_MS;
    while (!(await probe())) {
      if (performance.now() > deadline || dev.exitCode !== null) {
        const printed = lines.filter((line) => !line.startsWith('{') && !/ -> \d{3} \(/.test(line)); // without the request log
        throw new Error(`${what}: not within ${WAIT_MS / 1000} s; stdout: ${printed.join(' | ')}; stderr: ${stderr}`);
      }
      await sleep(50);
    }
  };

  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), 'petstore-dev-'));
    for (const source of SERVER_SOURCES) cpSync(join(PROJECT_ROOT, source), join(copy, source), { recursive: true });
    symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(copy, 'node_modules'));
  });

  afterAll(async () => {
    if (dev && dev.exitCode === null && dev.signalCode === null) {
      dev.kill('SIGTERM');
      await exited;
    }
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it('serves an edited handler after one reload, with the data and key from before it', async () => {
    const port = await freePort();
    // Run from the copy, as a newcomer runs it from the repository: `.data/` lands in the copy.
    dev = spawn(PROJECT_NODE, ['--import', 'tsx', join(PROJECT_ROOT, 'scripts', 'dev.ts')], {
      cwd: copy,
      env: commandEnvironment({ PORT: String(port), PETSTORE_SOURCE_ROOT: copy }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    exited = new Promise((resolve) => dev.once('exit', (code) => resolve(code)));
    createInterface({ input: dev.stdout! }).on('line', (line) => lines.push(line));
    dev.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));

    await until('the banner', () => lines.some((line) => line.startsWith('Watching ')));
    const key = lines.join('\n').match(/API key kept in \.data\/api-key: (\S+)/)?.[1];
    expect(key, lines.join('\n')).toBeDefined();
    expect(readFileSync(join(copy, '.data', 'api-key'), 'utf8').trim()).toBe(key);
    const url = `http://127.0.0.1:${port}${API_BASE_PATH}`;
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const created = await fetchApi(`${url}/pets`, { method: 'POST', headers, body: JSON.stringify({ name: 'Rex', categoryId: 1, status: 'available' }) });
    expect(created.status).toBe(201);
    expect((await fetchApi(`${url}/pets/${MISSING_ID}`, { headers })).body.message).toBe(OLD_MESSAGE);

    const file = join(copy, 'functions', 'getPet.ts');
    const source = readFileSync(file, 'utf8');
    const edited = source.replace('`No pet has the id ${petId}.`', '`Pet ${petId} is not in the inventory.`');
    expect(edited).not.toBe(source);
    const savedAt = performance.now();
    writeFileSync(file, edited);
    // Requests during the restart are refused (connection refused): the poll asks again.
    const served = async () => (await fetchApi(`${url}/pets/${MISSING_ID}`, { headers }).catch(() => undefined))?.body.message === NEW_MESSAGE;
    await until('the new answer', served);
    const servedMs = Math.round(performance.now() - savedAt);

    // The pet created before the reload, listed with the same key.
    const listed = await fetchApi(`${url}/pets?limit=100`, { headers });
    expect(listed.status).toBe(200);
    expect(listed.body).toContainEqual(created.body);

    dev.kill('SIGTERM');
    expect(await exited).toBe(0);
    const reloads = lines.filter((line) => line.startsWith('reload:'));
    console.log(`npm run dev: save to new answer ${servedMs} ms; ${reloads.join(' | ')}`);
    expect(reloads).toEqual([
      expect.stringMatching(/^reload: functions\/getPet\.ts changed; restarted the local API \(handlers, same port, data and key kept\) in \d+ ms$/),
    ]);
    expect(existsSync(join(copy, '.data', 'dynalite'))).toBe(true);
  }, 120_000);
});
