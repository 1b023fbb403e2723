/**
 * `npm start` refuses each mistake a newcomer makes in its settings in one line naming the remedy,
 * never a stack trace, and exits non-zero: ports, the data folder, a store LevelDB cannot open, a
 * cursor secret too short to sign. And a second process on a running API's data folder says whose store it uses.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROJECT_NODE, expectOneLineRefusal, runCli } from '../support/cli.ts';

const startApi = (env: Record<string, string>) => runCli('local/server.ts', [], { PORT: '0', ...env }, 30_000);
const dataDir = () => mkdtempSync(join(tmpdir(), 'petstore-mistake-'));

describe('PORT', () => {
  for (const port of ['abc', '99999', '-1', '3917.5', '']) {
    it(`PORT=${port}: one line, exit 1`, async () => {
      const run = await startApi({ PORT: port, PETSTORE_IN_MEMORY: '1' });
      expectOneLineRefusal(run, /^PORT must be a port number from 0 to 65535 \(0: any free port\), not /);
      expect(run.stderr).toContain(port === '' ? 'not empty' : `"${port}"`);
      expect(run.code).toBe(1);
    });
  }
});

it('an argument (npm start -- --port 4000): one line naming the environment variable, exit 2', async () => {
  const run = await runCli('local/server.ts', ['--port', '4000'], { PORT: '0', PETSTORE_IN_MEMORY: '1' }, 30_000);
  expectOneLineRefusal(run, 'npm start takes no arguments, not "--port 4000": its settings are environment variables, e.g. PORT=4000 npm start');
  expect(run.code).toBe(2);
});

it('PETSTORE_DATA_DIR naming a file: one line naming it and the remedy', async () => {
  const file = join(dataDir(), 'a-file');
  writeFileSync(file, 'not a folder');
  const run = await startApi({ PETSTORE_DATA_DIR: file });
  expectOneLineRefusal(run, `The data folder ${file} cannot be made (a file is in the way): point PETSTORE_DATA_DIR at a folder`);
});

const running = new Set<ChildProcess>();
afterEach(() => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
});

/** `npm start` on `dir`, until its start lines are out; `stop` sends SIGTERM and waits for the exit. */
function serve(dir: string): Promise<{ output: string; stop(): Promise<void> }> {
  const env: Record<string, string | undefined> = { ...process.env, PORT: '0', PETSTORE_DATA_DIR: dir };
  for (const name of ['DYNAMODB_ENDPOINT', 'PETSTORE_API_KEYS', 'PETSTORE_CURSOR_SECRET', 'PETSTORE_IN_MEMORY']) delete env[name];
  const child = spawn(PROJECT_NODE, ['--import', 'tsx', 'local/server.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => (output += String(chunk)));
    child.stdout.on('data', (chunk) => {
      output += String(chunk);
      if (output.includes('Docs: ')) resolve({
          output,
          stop: async () => {
            child.kill('SIGTERM');
            await exited;
          },
        });
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
  });
}

describe('a store LevelDB cannot open', () => {
  for (const [name, damage] of [
    ['CURRENT', (folder: string) => truncateSync(join(folder, 'CURRENT'), 0)],
    ['MANIFEST', (folder: string) => truncateSync(join(folder, readdirSync(folder).find((f) => f.startsWith('MANIFEST-')) as string), 10)],
  ] as const) {
    it(`a truncated ${name}: one line naming the folder and the remedy, data lost`, async () => {
      const dir = dataDir();
      const first = await serve(dir);
      await first.stop();
      const folder = join(dir, 'dynalite');
      damage(folder);
      const run = await startApi({ PETSTORE_DATA_DIR: dir });
      expectOneLineRefusal(run, `The local store ${folder} cannot be opened (Corruption: `);
      expect(run.stderr).toContain(`move it aside (mv ${folder} ${folder}.broken) or delete it to start with an empty store; the pets in it are lost`);
    });
  }
});

describe('a cursor secret shorter than 16 bytes', () => {
  it('PETSTORE_CURSOR_SECRET=abc: refused at start', async () => {
    const run = await startApi({ PETSTORE_IN_MEMORY: '1', PETSTORE_CURSOR_SECRET: 'abc' });
    expectOneLineRefusal(run, /^PETSTORE_CURSOR_SECRET is 3 bytes: give one of at least 16, or unset it/);
  });

  it('a 3-byte .data/cursor-secret: refused at start, naming the file', async () => {
    const dir = dataDir();
    writeFileSync(join(dir, 'cursor-secret'), 'abc');
    const run = await startApi({ PETSTORE_DATA_DIR: dir });
    expectOneLineRefusal(run, `${join(dir, 'cursor-secret')} holds a 3-byte cursor secret: delete it`);
    expect(readdirSync(dir)).toEqual(['cursor-secret']);
  });
});

it("a second process on a running API's data folder names that API's store", async () => {
  const dir = dataDir();
  const first = await serve(dir);
  const second = await serve(dir);
  expect(second.output).toMatch(new RegExp(`Store: the store of the local API already running on ${dir} \\(http://127\\.0\\.0\\.1:\\d+\\)`));
  expect(first.output).toMatch(/Store: embedded dynalite http:\/\/127\.0\.0\.1:\d+\n/);
  await second.stop();
  await first.stop();
});
