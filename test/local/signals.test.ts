/**
 * `npm start` stops as a server does: SIGTERM or SIGINT sent to the npm process itself (as a
 * process manager or `kill` sends it, not a terminal's Ctrl-C to the whole group) stops every
 * process it started and frees the port within 2 s.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, realpathSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';

const STOP_BOUND_MS = 2_000;

/** A process as /proc shows it; its start time tells it apart from a later one with its pid. */
interface ProcessId {
  pid: number;
  startTime: string;
}

/** Fields of /proc/<pid>/stat after the command's closing parenthesis: state, ppid, ..., starttime. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

function identify(pid: number): ProcessId {
  return { pid, startTime: statFields(pid)?.[19] ?? '' };
}

/** Still running: the same process (same start time) and not a zombie waiting to be reaped. */
function alive({ pid, startTime }: ProcessId): boolean {
  const fields = statFields(pid);
  return fields !== undefined && fields[19] === startTime && fields[0] !== 'Z';
}

function descendants(pid: number): number[] {
  const tasks = existsSync(`/proc/${pid}/task`) ? readdirSync(`/proc/${pid}/task`) : [];
  const children = tasks.flatMap((task) => {
    try {
      return readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
  return children.flatMap((child) => [child, ...descendants(child)]);
}

function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/**
 * A connection left open after its answer, as a browser's or curl's keep-alive is. Its request
 * creates a pet, so the server also holds a connection to the embedded store.
 */
function idleKeepAliveConnection(port: number, key: string): Promise<Socket> {
  const body = JSON.stringify({ name: 'Rex', categoryId: 1 });
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(
        `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      ),
    );
    socket.once('data', (chunk) => {
      expect(String(chunk)).toMatch(/^HTTP\/1\.1 201 .*\r\nConnection: keep-alive\r\n/s);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

const started: ProcessId[] = [];
afterEach(() => {
  // A failed run must not leave a server behind.
  for (const id of started.splice(0)) if (alive(id)) process.kill(id.pid, 'SIGKILL');
});

describe('npm start under a signal', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s to the npm process stops everything it started and frees the port',
    async (signal) => {
      // Port 0: the server takes a free port and says which.
      const env: Record<string, string | undefined> = { ...process.env, PORT: '0', PETSTORE_IN_MEMORY: '1' };
      delete env.DYNAMODB_ENDPOINT;
      const npm = spawn('npm', ['start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      const ready = new Promise<void>((resolve, reject) => {
        const read = (chunk: Buffer) => {
          output += String(chunk);
          if (output.includes('Docs:')) resolve();
        };
        npm.stdout.on('data', read);
        npm.stderr.on('data', read);
        npm.once('exit', () => reject(new Error(`npm start ended before its start lines:\n${output}`)));
      });
      const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
      started.push(identify(npm.pid as number));

      await ready;
      const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)\//.exec(output)?.[1]);
      const tree = [npm.pid as number, ...descendants(npm.pid as number)].map(identify);
      started.push(...tree);
      // One process serves, on the Node 22 that npm scripts run on (node_modules/.bin/node), not a wrapper.
      const servers = tree.filter(({ pid }) =>
        readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('local/server.ts'),
      );
      expect(servers).toHaveLength(1);
      expect(realpathSync(`/proc/${servers[0]!.pid}/exe`)).toBe(realpathSync('node_modules/.bin/node'));
      const key = /generated API key for this run: (\S+)/.exec(output)?.[1] as string;
      const idle = await idleKeepAliveConnection(port, key);

      const idleClosed = new Promise((resolve) => idle.once('close', resolve));
      npm.kill(signal);
      const signalled = Date.now();
      // The server closes the idle connection as it stops, then exits, and npm after it.
      await idleClosed;
      const code = await exited;
      expect(Date.now() - signalled).toBeLessThanOrEqual(STOP_BOUND_MS);
      expect(await refuses(port)).toBe(true);
      expect(tree.filter((id) => alive(id))).toEqual([]);
      // Stopped by closing everything, not by the stop deadline (which exits 1).
      expect(code).toBe(0);
      expect(output).toContain(`${signal}: stopping`);
    },
  );
});
