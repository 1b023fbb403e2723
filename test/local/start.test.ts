/** `npm start` as a newcomer runs it: a real process, configured only by its environment. */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, expect, it } from 'vitest';

let child: ChildProcess | undefined;
afterAll(() => {
  child?.kill('SIGTERM');
});

function start(env: Record<string, string>): Promise<{ url: string; output: string }> {
  child = spawn(process.execPath, ['--import', 'tsx', 'local/server.ts'], {
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start line in: ${output}`)), 30_000);
    child?.stdout?.on('data', (chunk) => {
      output += String(chunk);
      const url = /listening on (\S+)/.exec(output)?.[1];
      if (url && output.includes('curl')) {
        clearTimeout(timer);
        resolve({ url, output });
      }
    });
    child?.on('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
  });
}

it('starts on an in-memory store, prints a usable key and curl, and answers', async () => {
  const env: Record<string, string> = { PETSTORE_IN_MEMORY: '1' };
  delete process.env.PETSTORE_API_KEYS;
  const { url, output } = await start(env);
  const key = /generated API key for this run: (\S+)/.exec(output)?.[1];
  expect(key).toBeDefined();
  expect(output).toContain(`curl -s -X POST ${url}/pets -H 'Authorization: Bearer ${key}'`);
  const created = await fetch(`${url}/pets`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
  });
  expect(created.status).toBe(201);
  expect((await fetch(`${url}/pets`)).status).toBe(401);
});
