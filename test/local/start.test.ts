/** `npm start` as a newcomer runs it: a real process, configured only by its environment. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';

const running = new Set<ChildProcess>();
afterEach(() => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
});

interface Started {
  url: string;
  output: string;
  stop(): Promise<void>;
}

function start(env: Record<string, string>): Promise<Started> {
  const childEnv: Record<string, string | undefined> = { ...process.env, PORT: '0', ...env };
  delete childEnv.PETSTORE_API_KEYS;
  delete childEnv.DYNAMODB_ENDPOINT;
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/server.ts'], {
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
    running.delete(child);
  };
  let output = '';
  return new Promise((resolve, reject) => {
    // A safety timeout: fails the start when its line never comes.
    const timer = setTimeout(() => reject(new Error(`no start line in: ${output}`)), 30_000);
    child.stdout?.on('data', (chunk) => {
      output += String(chunk);
      const url = /listening on (\S+)/.exec(output)?.[1];
      if (url && output.includes('curl')) {
        clearTimeout(timer);
        resolve({ url, output, stop });
      }
    });
    child.stderr?.on('data', (chunk) => (output += String(chunk)));
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
  });
}

const createPet = (url: string, key: string, name: string) =>
  fetch(`${url}/pets`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name, categoryId: 1 }),
  });

it('starts on an in-memory store, prints a usable key and curl, and answers', async () => {
  const { url, output, stop } = await start({ PETSTORE_IN_MEMORY: '1' });
  const key = /generated API key for this run: (\S+)/.exec(output)?.[1];
  expect(key).toBeDefined();
  expect(output).toContain(`curl -s -X POST ${url}/pets -H 'Authorization: Bearer ${key}'`);
  expect((await createPet(url, key as string, 'Rex')).status).toBe(201);
  expect((await fetch(`${url}/pets`)).status).toBe(401);
  await stop();
});

it('keeps the generated key with the data: a restart prints the same key, which reads what was stored', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'petstore-start-'));
  const keyIn = (output: string) => /API key kept in (\S+): (\S+)/.exec(output);

  const first = await start({ PETSTORE_DATA_DIR: dataDir });
  const [, file, key] = keyIn(first.output) ?? [];
  expect(key).toMatch(/^local_[\w-]{32}$/);
  expect(file).toBe(join(dataDir, 'api-key'));
  expect(statSync(join(dataDir, 'api-key')).mode & 0o777).toBe(0o600);
  const created = await createPet(first.url, key as string, 'Kept');
  expect(created.status).toBe(201);
  const pet = (await created.json()) as { id: number };
  await first.stop();

  const second = await start({ PETSTORE_DATA_DIR: dataDir });
  expect(keyIn(second.output)?.[2]).toBe(key);
  expect(second.output).toContain(`Authorization: Bearer ${key}'`);
  const read = await fetch(`${second.url}/pets/${pet.id}`, { headers: { Authorization: `Bearer ${key}` } });
  expect(read.status).toBe(200);
  expect(await read.json()).toMatchObject({ id: pet.id, name: 'Kept' });
  await second.stop();
});
