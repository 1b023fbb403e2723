/**
 * `npm run dev` (scripts/dev.ts, local/dev.ts) on a copy of the sources (PETSTORE_SOURCE_ROOT), run
 * from the copy so its `.data/` is the copy's: every edit to a handler in the copy is served after
 * one reload, however the editor saves it (in place, by renaming a temporary file over it, by
 * deleting and creating it), and the data and key from before the reload still answer; a syntax
 * error keeps the old code serving and is said in one line; a start-up mistake ends dev in one line.
 * Reload times are printed, never asserted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/bundle/bundling.ts';
import { API_BASE_PATH } from '../../lib/domain/routes.ts';
import { BUNDLED_SOURCES } from '../../local/sources.ts';
import { PROJECT_NODE, commandEnvironment } from '../support/cli.ts';
import { fetchApi } from '../support/http.ts';
import { freePort } from '../support/ports.ts';
import { saveEveryWay } from '../support/editorSaves.ts';

/** What the local API runs besides functions/ and lib/: its own folder, the contract's, and the package's module settings. */
const SERVER_SOURCES = [...BUNDLED_SOURCES, 'local', 'contract', 'package.json', 'tsconfig.json', 'openapi.json'];
/** The functional limit on any wait; nothing about time is asserted below it. */
const WAIT_MS = 60_000;
const MISSING_ID = 987654;
const OLD_TEMPLATE = '`No pet has the id ${petId}.`';
const messageOf = (template: string) => template.slice(1, -1).replace('${petId}', String(MISSING_ID));
/** The template of each save of the editor-saves test. */
const nextTemplate = (how: string, round: number) => `\`Pet \${petId} is not in the inventory (${how} ${round}).\``;

/** A line of the request log (a JSON line, or the local API's `GET /v1/... -> 200 (3 ms)`). */
const isRequestLog = (line: string) => line.startsWith('{') || / -> \d{3} \(/.test(line);

/** One `npm run dev`, its output read line by line. */
class Dev {
  readonly lines: string[] = [];
  stderr = '';
  readonly process: ChildProcess;
  readonly exited: Promise<number | null>;

  constructor(copy: string, port: number) {
    // Run from the copy, as a newcomer runs it from the repository: `.data/` lands in the copy.
    this.process = spawn(PROJECT_NODE, ['--import', 'tsx', join(PROJECT_ROOT, 'scripts', 'dev.ts')], {
      cwd: copy,
      env: commandEnvironment({ PORT: String(port), PETSTORE_SOURCE_ROOT: copy }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.exited = new Promise((resolve) => this.process.once('exit', (code) => resolve(code)));
    createInterface({ input: this.process.stdout! }).on('line', (line) => {
      this.lines.push(line);
      // Not on the request log's lines, which a probe's own request prints.
      if (!isRequestLog(line)) for (const listener of [...this.listeners]) listener();
    });
    this.process.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.process.once('exit', () => {
      for (const listener of [...this.listeners]) listener();
    });
  }

  private readonly listeners = new Set<() => void>();

  /**
   * Waits until `probe` holds, asking it now and again at each line dev prints (a reload says it is
   * done in one); fails at dev's exit, or after WAIT_MS (a safety timeout), saying what it waited for.
   */
  until(what: string, probe: () => boolean | Promise<boolean>): Promise<void> {
    return new Promise((resolve, reject) => {
      let asking: Promise<void> | undefined;
      let askAgain = false;
      const done = (error?: Error) => {
        this.listeners.delete(ask);
        clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      };
      const failure = (why: string) => {
        const printed = this.lines.filter((line) => !isRequestLog(line));
        return new Error(`${what}: ${why}; stdout: ${printed.join(' | ')}; stderr: ${this.stderr}`);
      };
      const ask = (): void => {
        if (asking) {
          askAgain = true;
          return;
        }
        asking = (async () => {
          do {
            askAgain = false;
            if (await probe()) return done();
          } while (askAgain);
          if (this.process.exitCode !== null || this.process.signalCode !== null) done(failure('dev ended'));
        })()
          .catch((error: Error) => done(error))
          .finally(() => (asking = undefined));
      };
      // A safety timeout: fails the wait when the probe never holds.
      const timer = setTimeout(() => done(failure(`not within ${WAIT_MS / 1000} s`)), WAIT_MS);
      this.listeners.add(ask);
      ask();
    });
  }

  reloads = () => this.lines.filter((line) => line.startsWith('reload:'));

  async stop(): Promise<number | null> {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGTERM');
    return this.exited;
  }
}

describe('npm run dev', () => {
  let copy: string;
  let dev: Dev | undefined;

  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), 'petstore-dev-'));
    for (const source of SERVER_SOURCES) cpSync(join(PROJECT_ROOT, source), join(copy, source), { recursive: true });
    symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(copy, 'node_modules'));
  });

  afterAll(async () => {
    await dev?.stop();
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it('serves every edit, saved in place, by rename over and by delete and create, one after another, with the data and key from before', async () => {
    const port = await freePort();
    dev = new Dev(copy, port);
    await dev.until('the banner', () => dev!.lines.some((line) => line.startsWith('Watching ')));
    const key = dev.lines.join('\n').match(/API key kept in \.data\/api-key: (\S+)/)?.[1];
    expect(key, dev.lines.join('\n')).toBeDefined();
    expect(readFileSync(join(copy, '.data', 'api-key'), 'utf8').trim()).toBe(key);
    const url = `http://127.0.0.1:${port}${API_BASE_PATH}`;
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const created = await fetchApi(`${url}/pets`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'Rex', categoryId: 1, status: 'available' }),
    });
    expect(created.status).toBe(201);
    expect((await fetchApi(`${url}/pets/${MISSING_ID}`, { headers })).body.message).toBe(messageOf(OLD_TEMPLATE));

    const file = join(copy, 'functions', 'getPet.ts');
    const timings = await saveEveryWay(file, OLD_TEMPLATE, nextTemplate, async (template, label) => {
      // Requests during the restart are refused (connection refused): the poll asks again.
      const served = async () =>
        (await fetchApi(`${url}/pets/${MISSING_ID}`, { headers }).catch(() => undefined))?.body.message ===
        messageOf(template);
      await dev!.until(`the answer after save ${label}`, served);
    });

    // The pet created before the reloads, listed with the same key.
    const listed = await fetchApi(`${url}/pets?limit=100`, { headers });
    expect(listed.status).toBe(200);
    expect(listed.body).toContainEqual(created.body);
    console.log(`npm run dev, save to new answer: ${timings.join('; ')}`);
    // At least one reload line per save (the line follows the restart that served it), so that no line at all fails.
    await dev.until(
      `a reload line for each of the ${timings.length} saves`,
      () => dev!.reloads().length >= timings.length,
    );
    for (const line of dev.reloads()) {
      expect(line).toMatch(
        /^reload: functions\/getPet\.ts changed; restarted the local API \(handlers, same port, data and key kept\) in \d+ ms$/,
      );
    }
    expect(existsSync(join(copy, '.data', 'dynalite'))).toBe(true);
  }, 180_000);

  it('keeps the old code serving through a syntax error, says where in one line, and reloads on the fix', async () => {
    expect(dev, 'the first test started dev').toBeDefined();
    const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(dev!.lines.join('\n'))?.[1]);
    const key = dev!.lines.join('\n').match(/API key kept in \.data\/api-key: (\S+)/)![1]!;
    const url = `http://127.0.0.1:${port}${API_BASE_PATH}/pets/${MISSING_ID}`;
    const headers = { Authorization: `Bearer ${key}` };
    const before = (await fetchApi(url, { headers })).body.message;
    const file = join(copy, 'lib', 'http', 'responses.ts');
    const source = readFileSync(file, 'utf8');
    // The lines about this file only: the last save of the test before may still be reporting.
    const aboutIt = () => dev!.reloads().filter((line) => line.startsWith('reload: lib/http/responses.ts changed;'));
    writeFileSync(file, `${source}const broken = ;\n`);
    await dev!.until('the build failure line', () => aboutIt().length > 0);
    const line = aboutIt()[0]!;
    const brokenLine = source.split('\n').length;
    expect(line).toMatch(
      new RegExp(
        `^reload: lib/http/responses\\.ts changed; the build failed, the old code still runs: lib/http/responses\\.ts:${brokenLine}:\\d+: .+$`,
      ),
    );
    expect(dev!.stderr).not.toMatch(/^\s+at /m);
    expect((await fetchApi(url, { headers })).body.message).toBe(before);

    writeFileSync(file, source);
    // One save may be seen as two changes (the truncation, then the write): the broken one may be
    // reported again before the fix is; every line before the restart is that failure.
    const restarted = (line: string) => /^reload: lib\/http\/responses\.ts changed; restarted the local API/.test(line);
    await dev!.until('the reload after the fix', () => aboutIt().some(restarted));
    const lines = aboutIt();
    expect(
      lines.slice(0, lines.findIndex(restarted)).every((line) => line.includes(`responses.ts:${brokenLine}:`)),
    ).toBe(true);
    expect((await fetchApi(url, { headers })).body.message).toBe(before);
    expect(await dev!.stop()).toBe(0);
  }, 120_000);

  it('exits non-zero in one line naming npm run dev when the port is taken', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    try {
      const refused = new Dev(copy, port);
      const code = await refused.exited;
      expect(code).not.toBe(0);
      expect(refused.stderr.trim().split('\n'), refused.stderr).toEqual([
        expect.stringMatching(new RegExp(`^Port ${port} .*already in use.*: PORT=${port + 1} npm run dev$`)),
      ]);
      expect(refused.lines.filter((line) => line.startsWith('Watching '))).toEqual([]);
    } finally {
      taken.close();
    }
  }, 60_000);
});
