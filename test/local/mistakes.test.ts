/**
 * `npm start` refuses each mistake a newcomer makes in its settings in one line naming the remedy,
 * never a stack trace, and exits non-zero: ports, the data folder, a store LevelDB cannot open, a
 * cursor secret too short to sign. And a second process on a running API's data folder says whose store it uses.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PortSettingError, parsePort } from '@petstore/local-kit/port';
import { PROJECT_NODE, expectOneLineRefusal, runCli } from '../support/cli.ts';

const startApi = (env: Record<string, string>) => runCli('local/server.ts', [], { PORT: '0', ...env }, 30_000);
const dataDir = () => mkdtempSync(join(tmpdir(), 'petstore-mistake-'));

// Each PORT as the start reads it (local/server.ts), in this process: a refused PORT's one line and
// exit 1 through the start itself are under "every documented variable" below.
describe('PORT', () => {
  for (const port of ['abc', '99999', '-1', '3917.5', '']) {
    it(`PORT=${port}: refused, saying what it takes`, () => {
      expect(() => parsePort(port, 3000, 'PORT')).toThrow(PortSettingError);
      expect(() => parsePort(port, 3000, 'PORT')).toThrow(
        /^PORT must be a port number from 0 to 65535 \(0: any free port\), not /,
      );
      expect(() => parsePort(port, 3000, 'PORT')).toThrow(port === '' ? 'not empty' : `"${port}"`);
    });
  }
});

it('an argument (npm start -- --port 4000): one line naming the environment variable, exit 2', async () => {
  const run = await runCli('local/server.ts', ['--port', '4000'], { PORT: '0', PETSTORE_IN_MEMORY: '1' }, 30_000);
  expectOneLineRefusal(
    run,
    'npm start takes no arguments, not "--port 4000": its settings are environment variables, e.g. PORT=4000 npm start',
  );
  expect(run.code).toBe(2);
});

/** The variables docs/local-development.md documents, from its table of them. */
const DOCUMENTED = [
  ...readFileSync('docs/local-development.md', 'utf8').matchAll(/^\| `([A-Z_]+)(?:=[^`]*)?` \|/gm),
].map((match) => match[1]!);

describe('every documented variable, given a value the start cannot use', () => {
  const notDynamo = createServer((_request, response) => response.writeHead(404).end('<html>not DynamoDB</html>'));
  let notDynamoUrl = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => notDynamo.listen(0, '127.0.0.1', resolve));
    notDynamoUrl = `http://127.0.0.1:${(notDynamo.address() as { port: number }).port}`;
  });
  afterAll(() => void notDynamo.close());

  const aFile = () => {
    const file = join(dataDir(), 'a-file');
    writeFileSync(file, 'not a folder');
    return file;
  };
  const secretFolder = () => {
    const dir = dataDir();
    mkdirSync(join(dir, 'cursor-secret'));
    return dir;
  };
  /** variable, what the value is, the value (made when the case runs), what the one line says */
  const CASES: ReadonlyArray<[string, string, () => string, RegExp]> = [
    ['PORT', 'not a number', () => 'abc', /^PORT must be a port number from 0 to 65535/],
    ['PORT', 'out of range', () => '70000', /^PORT must be a port number from 0 to 65535/],
    [
      'PETSTORE_API_KEYS',
      'no key in the list',
      () => ' , ',
      /^PETSTORE_API_KEYS holds no key: give comma-separated keys, or unset it/,
    ],
    ['PETSTORE_API_KEYS', 'empty', () => '', /^PETSTORE_API_KEYS holds no key/],
    [
      'PETSTORE_API_KEYS',
      'a key with a space, which no Bearer header carries',
      () => 'my key',
      /^PETSTORE_API_KEYS key 1 of 1 cannot be sent as "Authorization: Bearer <key>" \(it has a space/,
    ],
    [
      'PETSTORE_API_KEYS',
      'a read key with a space',
      () => 'good-key,read:my key',
      /^PETSTORE_API_KEYS key 2 of 2 cannot be sent as "Authorization: Bearer <key>"/,
    ],
    [
      'PETSTORE_IN_MEMORY',
      'a malformed boolean',
      () => 'yes',
      /^PETSTORE_IN_MEMORY takes 1 or true .* or 0 or false .*, not "yes"\.$/,
    ],
    ['PETSTORE_IN_MEMORY', 'out of range', () => '2', /^PETSTORE_IN_MEMORY takes 1 or true/],
    ['PETSTORE_IN_MEMORY', 'empty', () => '', /^PETSTORE_IN_MEMORY takes 1 or true/],
    [
      'PETSTORE_KEEP_DAMAGED_STORE',
      'a malformed boolean',
      () => 'yes',
      /^PETSTORE_KEEP_DAMAGED_STORE takes 1 or true .* or 0 or false .*, not "yes"\.$/,
    ],
    [
      'PETSTORE_DATA_DIR',
      'a file',
      aFile,
      /^The data folder .* cannot be made \(a file is in the way\): point PETSTORE_DATA_DIR at a folder you can write/,
    ],
    [
      'PETSTORE_DATA_DIR',
      'nonexistent, under /proc',
      () => '/proc/petstore-x',
      /^The data folder \/proc\/petstore-x cannot be made \(\w+\): point PETSTORE_DATA_DIR/,
    ],
    [
      'PETSTORE_DATA_DIR',
      'an existing folder nobody can write (/proc)',
      () => '/proc',
      /^The data folder \/proc cannot be written \(\w+\): point PETSTORE_DATA_DIR/,
    ],
    [
      'PETSTORE_DATA_DIR',
      'holding a folder where the cursor secret goes',
      secretFolder,
      /cursor-secret cannot be read \(EISDIR\): remove it/,
    ],
    [
      'DYNAMODB_ENDPOINT',
      'not a URL',
      () => 'not-a-url',
      /^DYNAMODB_ENDPOINT must be an http\(s\) URL .*, not "not-a-url"; unset it/,
    ],
    [
      'DYNAMODB_ENDPOINT',
      'refusing connections',
      () => 'http://127.0.0.1:1',
      /^DYNAMODB_ENDPOINT http:\/\/127\.0\.0\.1:1 cannot be used as a DynamoDB store \(ECONNREFUSED\): start that store, or unset/,
    ],
    [
      'DYNAMODB_ENDPOINT',
      'a server that is not DynamoDB',
      () => notDynamoUrl,
      /^DYNAMODB_ENDPOINT http:\/\/127\.0\.0\.1:\d+ cannot be used as a DynamoDB store \(.+\): start that store/,
    ],
    ['TABLE_NAME', 'too short', () => 'a', /^TABLE_NAME must be a DynamoDB table name .*, not "a"; unset it/],
    ['TABLE_NAME', 'with a space', () => 'bad name!', /^TABLE_NAME must be a DynamoDB table name/],
    ['CONTROL_TABLE_NAME', 'too short', () => 'x', /^CONTROL_TABLE_NAME must be a DynamoDB table name/],
    [
      'PETSTORE_CURSOR_SECRET',
      'too short',
      () => 'abc',
      /^PETSTORE_CURSOR_SECRET is 3 bytes: give one of at least 16, or unset it/,
    ],
    [
      'CORS_ALLOWED_ORIGINS',
      'not an origin',
      () => 'not an origin',
      /^CORS_ALLOWED_ORIGINS takes comma-separated origins .*, not "not an origin"\.$/,
    ],
    [
      'CORS_ALLOWED_ORIGINS',
      'an origin with a path',
      () => 'https://app.example.com/x',
      /^CORS_ALLOWED_ORIGINS takes comma-separated origins/,
    ],
    [
      'STATUS_INDEX_SHARDS',
      'not a power of two',
      () => '3',
      /^STATUS_INDEX_SHARDS must be a power of two from 1 to 64, not '3'\. Unset it for the default\.$/,
    ],
    ['STATUS_INDEX_SHARDS', 'out of range', () => '128', /^STATUS_INDEX_SHARDS must be a power of two/],
    ['STATUS_INDEX_SHARDS', 'not a number', () => 'abc', /^STATUS_INDEX_SHARDS must be a power of two/],
  ];

  it('has a case for every variable the docs list', () => {
    expect(DOCUMENTED.length).toBeGreaterThan(8);
    expect(DOCUMENTED.filter((name) => !CASES.some(([variable]) => variable === name))).toEqual([]);
  });

  it.concurrent.each(CASES)(
    '%s %s: one line with the remedy, a non-zero exit, no stack, no hang',
    async (variable, _what, value, says) => {
      // In memory unless the case is about the store: a refusal must not depend on the data folder.
      const store: Record<string, string> = ['PETSTORE_DATA_DIR', 'DYNAMODB_ENDPOINT', 'PETSTORE_IN_MEMORY'].includes(
        variable,
      )
        ? {}
        : { PETSTORE_IN_MEMORY: '1' };
      const run = await startApi({ ...store, [variable]: value() });
      expectOneLineRefusal(run, says);
      expect(run.code).toBe(1);
    },
  );
});

const running = new Set<ChildProcess>();
afterEach(() => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
});

/** `npm start` on `dir`, until its start lines are out; `stop` sends SIGTERM and waits for the exit. */
function serve(dir: string): Promise<{ output: string; stop(): Promise<void> }> {
  const env: Record<string, string | undefined> = { ...process.env, PORT: '0', PETSTORE_DATA_DIR: dir };
  for (const name of ['DYNAMODB_ENDPOINT', 'PETSTORE_API_KEYS', 'PETSTORE_CURSOR_SECRET', 'PETSTORE_IN_MEMORY'])
    delete env[name];
  const child = spawn(PROJECT_NODE, ['--import', 'tsx', 'local/server.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => (output += String(chunk)));
    child.stdout.on('data', (chunk) => {
      output += String(chunk);
      if (output.includes('Docs: '))
        resolve({
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
    [
      'MANIFEST',
      (folder: string) =>
        truncateSync(join(folder, readdirSync(folder).find((f) => f.startsWith('MANIFEST-')) as string), 10),
    ],
  ] as const) {
    it(`a truncated ${name}: one line naming the folder and the remedy, data lost`, async () => {
      const dir = dataDir();
      const first = await serve(dir);
      await first.stop();
      const folder = join(dir, 'dynalite');
      damage(folder);
      const run = await startApi({ PETSTORE_DATA_DIR: dir });
      expectOneLineRefusal(run, `The local store ${folder} cannot be opened (Corruption: `);
      expect(run.stderr).toContain(
        `move it aside (mv ${folder} ${folder}.broken) or delete it to start with an empty store; the pets in it are lost`,
      );
    });
  }
});

describe('a cursor secret shorter than 16 bytes', () => {
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
  expect(second.output).toMatch(
    new RegExp(`Store: the store of the local API already running on ${dir} \\(http://127\\.0\\.0\\.1:\\d+\\)`),
  );
  expect(first.output).toMatch(/Store: embedded dynalite http:\/\/127\.0\.0\.1:\d+\n/);
  await second.stop();
  await first.stop();
});
