/**
 * Real faults of the persisted local store's folder, for tests that run `npm start`'s process
 * (test/support/serverProcess.ts): a folder made unwritable (immutable as root, for whom write
 * permissions change nothing; without write permission otherwise) and a disk filled to its last
 * byte (a tmpfs in a mount namespace of its own, which ends with the process holding it).
 */
import { spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, openSync, closeSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { afterAll, expect } from 'vitest';
import { PET_STATUSES, type Pet } from '../../lib/domain/schemas.ts';
import type { ServerProcess } from './serverProcess.ts';

const isRoot = process.getuid?.() === 0;

const locked = new Set<string>();
afterAll(() => {
  // An immutable folder cannot be removed: a failed test must not leave one behind.
  for (const folder of locked) unlockFolder(folder);
});

/** Makes every file of `folder`, and the folder, take no write (as root: `chattr +i`; else `chmod a-w`). */
export function lockFolder(folder: string): void {
  locked.add(folder);
  const [command, ...args] = isRoot ? ['chattr', '-R', '+i', folder] : ['chmod', '-R', 'a-w', folder];
  expect(spawnSync(command!, args).status).toBe(0);
}

/** Gives `folder` its writes back. */
export function unlockFolder(folder: string): void {
  const [command, ...args] = isRoot ? ['chattr', '-R', '-i', folder] : ['chmod', '-R', 'u+w', folder];
  expect(spawnSync(command!, args).status).toBe(0);
  locked.delete(folder);
}

/** A 503 in the Error shape with Retry-After, as a store fault answers. */
export async function expectUnavailable(res: Response): Promise<void> {
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe('1');
  expect(await res.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, message: expect.any(String) });
}

/** The lines a server said about its store on stderr. */
export const storeLines = (server: ServerProcess): string[] =>
  server
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('Store:'));

/**
 * A tmpfs of `sizeBytes` mounted on `mount` in a mount namespace held by a process of its own, so
 * that it outlives the servers started in it (`wrapper`) and goes when the holder ends (at `close`,
 * or with this test process: the holder reads its stdin, a pipe from here).
 */
export interface FullDiskNamespace {
  /** The mount point, as the servers see it. */
  mount: string;
  /** Run a server with this wrapper to start it inside the namespace. */
  wrapper: string[];
  /** Fills the tmpfs to its last byte. */
  fill(): void;
  /** Frees what `fill` took. */
  free(): void;
  close(): Promise<void>;
}

export async function fullDiskNamespace(sizeBytes: number): Promise<FullDiskNamespace> {
  const mount = mkdtempSync(join(tmpdir(), 'petstore-disk-'));
  const namespace = isRoot
    ? ['unshare', '--mount', '--propagation', 'private']
    : ['unshare', '--user', '--map-root-user', '--mount'];
  const holder: ChildProcessByStdio<Writable, Readable, null> = spawn(
    namespace[0]!,
    [
      ...namespace.slice(1),
      'sh',
      '-c',
      `mount -t tmpfs -o size=${sizeBytes} tmpfs "$0" && echo mounted && exec cat`,
      mount,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const [chunk] = (await once(holder.stdout, 'data')) as [Buffer];
  expect(String(chunk)).toBe('mounted\n');
  const enter = isRoot ? ['-m'] : ['-U', '-m', '--preserve-credentials'];
  // The tmpfs as the holder's namespace sees it.
  const filler = join(`/proc/${holder.pid}/root`, mount, 'filler');
  return {
    mount,
    // Entering a mount namespace moves to its root: back to this process's folder, where the server runs.
    wrapper: ['nsenter', '-t', String(holder.pid), ...enter, `--wd=${process.cwd()}`, '--'],
    fill: () => {
      const fd = openSync(filler, 'a');
      try {
        // Whole pages first, then single bytes into the last page the disk has.
        for (const size of [64 * 1024, 4096, 1]) {
          const bytes = Buffer.alloc(size);
          for (;;) {
            try {
              writeSync(fd, bytes);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
              break;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    free: () => rmSync(filler),
    close: async () => {
      const ended = once(holder, 'exit');
      holder.stdin.end();
      await ended;
    },
  };
}

export interface SentPet {
  name: string;
  categoryId: number;
  status: (typeof PET_STATUSES)[number];
}

/** `POST /pets` with `apiKey`, and `idempotencyKey` when given. */
export const createPet = (base: string, apiKey: string, sent: SentPet, idempotencyKey?: string) =>
  fetch(`${base}/pets`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${apiKey}`,
      'Content-Type': 'application/json',
      ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}),
    },
    body: JSON.stringify(sent),
  });

export interface CreateLoadOptions {
  clients: number;
  /** Retry a refused create at once with the same Idempotency-Key (else go on to the next pet). */
  retrySameKey: boolean;
  /** Begins each Idempotency-Key and name. */
  prefix: string;
}

/**
 * Clients creating pets one after another, each with an Idempotency-Key of its own, until stopped.
 * A 503 in the Error shape with Retry-After is counted as refused, a 409 (the key's earlier try
 * still in progress) is retried, anything else but a 201 is unexpected.
 */
export class CreateLoad {
  readonly acknowledged: { key: string; sent: SentPet; pet: Pet }[] = [];
  refused = 0;
  readonly unexpected: string[] = [];
  #stopped = false;
  readonly #waiting = new Set<() => void>();

  constructor(
    private readonly base: string,
    private readonly apiKey: string,
    private readonly options: CreateLoadOptions,
  ) {}

  run(): Promise<void> {
    return Promise.all(Array.from({ length: this.options.clients }, (_, client) => this.#client(client))).then(
      () => {},
    );
  }

  async #client(client: number): Promise<void> {
    const { prefix, retrySameKey } = this.options;
    for (let n = 0; !this.#stopped; n++) {
      const key = `${prefix}-client-${client}-${n}`;
      const sent = { name: `${prefix} client ${client} #${n}`, categoryId: 1, status: PET_STATUSES[n % 3]! };
      for (;;) {
        const res = await createPet(this.base, this.apiKey, sent, key);
        if (res.status === 201) {
          this.acknowledged.push({ key, sent, pet: (await res.json()) as Pet });
          break;
        }
        const body = await res.text();
        if (res.status === 503 && res.headers.get('retry-after') === '1' && body.includes('"SERVICE_UNAVAILABLE"'))
          this.refused++;
        else if (res.status !== 409) this.unexpected.push(`${res.status} ${body}`);
        this.#notify();
        if (this.#stopped || (res.status === 503 && !retrySameKey)) break;
      }
      this.#notify();
    }
  }

  #notify(): void {
    for (const check of this.#waiting) check();
  }

  /** Resolves once `condition` holds (checked at each answer). */
  until(condition: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (!condition()) return;
        this.#waiting.delete(check);
        resolve();
      };
      this.#waiting.add(check);
      check();
    });
  }

  stop(): void {
    this.#stopped = true;
  }
}

/** Resolves once the server's stderr matches `pattern`; rejected when it exits first. */
export function saidOnStderr(server: ServerProcess, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!pattern.test(server.stderr())) return;
      server.child.stderr.off('data', check);
      resolve();
    };
    // Listeners run in order: serverProcess's own, which keeps the chunk, came first.
    server.child.stderr.on('data', check);
    check();
    server.child.once('close', () => reject(new Error(`server exited before saying ${pattern}:\n${server.stderr()}`)));
  });
}
