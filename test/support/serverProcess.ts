/** `npm start`'s process (local/server.ts on the project's Node, without npm), for tests that signal, kill or race it. */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { afterAll, expect } from 'vitest';
import { commandEnvironment, PROJECT_NODE } from './cli.ts';

export interface ServerProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** Its base URL (`http://127.0.0.1:<port>/v1`), once it listens and has printed its start lines; rejected when it exits first. */
  url: Promise<string>;
  stdout(): string;
  stderr(): string;
  /** Resolves once its stdout matches `pattern`; rejected when it exits first. */
  printed(pattern: RegExp): Promise<void>;
  /** Its exit code (null when a signal ended it) and when it exited (epoch ms). */
  exited: Promise<{ code: number | null; at: number }>;
}

const children: ServerProcess['child'][] = [];
afterAll(() => {
  // A failed test must not leave a server behind.
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** Starts local/server.ts with commandEnvironment(env) (PORT 0 unless given), run by `wrapper` when given (`unshare ...`). */
export function spawnServer(env: Record<string, string>, wrapper: readonly string[] = []): ServerProcess {
  const [command = PROJECT_NODE, ...args] = [...wrapper, PROJECT_NODE, '--import', 'tsx', 'local/server.ts'];
  const child = spawn(command, args, {
    env: commandEnvironment({ PORT: '0', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.once('exit', (code) => resolve({ code, at: Date.now() })),
  );
  const url = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      stdout += String(chunk);
      // Once the start lines are all in (the docs line is the last), so a test may read them.
      const found = /listening on (\S+)/.exec(stdout)?.[1];
      if (found && stdout.includes('\nDocs:')) resolve(found);
    });
    void exited.then(({ code }) =>
      reject(new Error(`server exited (${code}) before listening:\n${stdout}\n${stderr}`)),
    );
  });
  url.catch(() => {});
  const printed = (pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!pattern.test(stdout)) return;
        child.stdout.off('data', check);
        resolve();
      };
      child.stdout.on('data', check);
      check();
      child.once('close', () => reject(new Error(`server exited before printing ${pattern}:\n${stdout}\n${stderr}`)));
    });
  return { child, url, stdout: () => stdout, stderr: () => stderr, printed, exited };
}

/** A started server, with its base URL once it listens. */
export async function startServer(
  env: Record<string, string>,
  wrapper: readonly string[] = [],
): Promise<ServerProcess & { base: string }> {
  const server = spawnServer(env, wrapper);
  return { ...server, base: await server.url };
}

/** Stops `server` with SIGTERM and expects it to exit 0 (its stderr shown when not). */
export async function stopCleanly(server: ServerProcess): Promise<void> {
  server.child.kill('SIGTERM');
  expect((await server.exited).code, server.stderr()).toBe(0);
}
