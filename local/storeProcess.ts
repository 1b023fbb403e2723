/**
 * The persisted local store in a process of its own (storeChild.mjs), so that a LevelDB error, which
 * dynalite throws where nothing can catch it, is handled there (or ends that process) and never
 * ends the local API.
 *
 * This process keeps the store's public port for its whole life and relays each connection to the
 * child's private one: the endpoint the handlers were given never changes and is never free for
 * another server to take. A LevelDB error cuts the connections of the requests in flight (they
 * answer 503 SERVICE_UNAVAILABLE, a write's saying its outcome is unknown) and is reported; the child
 * goes on serving reads, and is replaced by a new one once its folder takes writes again. When a
 * child dies, the connections it held are cut, and another child opens the folder; connections made
 * meanwhile wait for it, or are cut at once while the folder cannot be opened, so that they too
 * answer 503 without waiting.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const CHILD_SCRIPT = fileURLToPath(new URL('./storeChild.mjs', import.meta.url));
/** Wait before starting a child again; doubled while children die before they are ready. */
const FIRST_RESTART_MS = 50;
const MAX_RESTART_MS = 2_000;

export interface StoreProcess {
  endpoint: string;
  /** Faults so far, in order (a fault repeated is one entry). */
  faults: string[];
  close(): Promise<void>;
}

export interface StoreProcessOptions {
  port?: number;
  /** Called at each fault (the child's one-line LevelDB error; `first` unless the same came before). */
  onFault?: (message: string, first: boolean) => void;
  /** Called once when the child finds its folder deleted or replaced: it takes no write from then. */
  onGone?: () => void;
}

export async function startStoreProcess(
  folder: string,
  { port = 0, onFault, onGone }: StoreProcessOptions = {},
): Promise<StoreProcess> {
  const faults: string[] = [];
  const child = new ChildHolder(
    folder,
    (message) => {
      const first = !faults.includes(message);
      if (first) faults.push(message);
      onFault?.(message, first);
    },
    () => onGone?.(),
  );
  try {
    await child.start();
  } catch (error) {
    await child.close();
    throw error;
  }
  const relay = createServer((client) => child.relay(client));
  try {
    await listenOn(relay, port);
  } catch (error) {
    await child.close();
    throw error;
  }
  return {
    endpoint: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`,
    faults,
    close: async () => {
      const stopped = new Promise<void>((resolve) => relay.close(() => resolve()));
      await child.close();
      await stopped;
    },
  };
}

function listenOn(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
}

/** The current child: started, restarted after a fault, closed; and the connections relayed to it. */
class ChildHolder {
  private process: ChildProcess | undefined;
  private ready: Promise<number> | undefined;
  private closing = false;
  private restartMs = FIRST_RESTART_MS;
  /** Until a first child is ready, a death is the first start's failure, not a fault to restart after. */
  private everReady = false;
  /** The last child failed to open the folder: connections are cut at once (fast 503s) until one opens it. */
  private down = false;
  /** A child being closed to be replaced (its exit is no fault). */
  private replacing: ChildProcess | undefined;
  private readonly clients = new Set<Socket>();

  constructor(
    private readonly folder: string,
    private readonly faulted: (message: string) => void,
    private readonly gone: () => void,
  ) {}

  /** Starts a child and settles with its private port once it listens. */
  start(): Promise<number> {
    // The first start's folder was just opened by the start itself (refuseUnopenable): a later one probes it.
    const child = fork(CHILD_SCRIPT, [this.folder, ...(this.everReady ? ['--probe'] : [])], {
      execArgv: [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.process = child;
    // A send to a child that is dying fails; its exit is handled below.
    child.on('error', () => {});
    let fault: string | undefined;
    let opened = false;
    this.ready = new Promise((resolve, reject) => {
      child.on('message', (message: { type?: string; port?: number; message?: string; fatal?: boolean }) => {
        if (message.type === 'ready' && message.port) {
          opened = true;
          this.down = false;
          resolve(message.port);
        }
        if (message.type === 'fault' && message.message) {
          fault = message.message;
          // A LevelDB error the child lives through is said now; a fatal one at its exit.
          if (opened && !message.fatal) this.faulted(message.message);
        }
        if (message.type === 'writable') this.replace(child);
        if (message.type === 'gone') this.gone();
      });
      child.once('exit', (code, signal) => {
        reject(
          new Error(`The local store's process ended before it was ready (${fault ?? signal ?? `exit ${code}`}).`),
        );
        if (!opened) this.down = true;
        this.ended(child, fault ?? `its process ended (${signal ?? `exit ${code}`})`);
      });
    });
    // A child that dies before it is ready is restarted (or reported by the first start's caller).
    this.ready.catch(() => {});
    return this.ready.then((port) => {
      this.everReady = true;
      this.restartMs = FIRST_RESTART_MS;
      return port;
    });
  }

  /** After an I/O error, once the folder takes writes again: LevelDB accepts writes only once opened anew. */
  private replace(old: ChildProcess): void {
    if (old !== this.process || this.closing) return;
    this.replacing = old;
    const exited = once(old, 'exit');
    old.send('close', (error) => error && old.kill());
    this.ready = exited.then(() => (this.closing ? 0 : this.start()));
    this.ready.catch(() => {});
  }

  private ended(child: ChildProcess, why: string): void {
    if (child !== this.process || child === this.replacing || this.closing || !this.everReady) return;
    // Connections it served are cut: their requests are answered 503 by the handlers' store layer.
    for (const client of this.clients) client.destroy();
    this.faulted(why);
    const wait = this.restartMs;
    this.restartMs = Math.min(this.restartMs * 2, MAX_RESTART_MS);
    this.ready = new Promise<void>((resolve) => setTimeout(resolve, wait)).then(() =>
      this.closing ? 0 : this.start(),
    );
    this.ready.catch(() => {});
  }

  /** Joins a connection to the child's port, once a child is ready. */
  relay(client: Socket): void {
    if (this.down) return void client.destroy();
    this.clients.add(client);
    client.once('close', () => this.clients.delete(client));
    client.on('error', () => client.destroy());
    const connect = (port: number) => {
      if (client.destroyed || this.closing) return void client.destroy();
      const upstream = createConnection(port, '127.0.0.1');
      upstream.on('error', () => client.destroy());
      upstream.once('close', () => client.destroy());
      client.once('close', () => upstream.destroy());
      client.pipe(upstream).pipe(client);
    };
    const waitForChild = (): void => {
      this.ready?.then(connect, () => (this.closing ? client.destroy() : setTimeout(waitForChild, FIRST_RESTART_MS)));
    };
    waitForChild();
  }

  /** A clean stop: the child closes its server and LevelDB, then exits. */
  async close(): Promise<void> {
    this.closing = true;
    const child = this.process;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    // A child that is dying of a fault may no longer read its channel: then it is ended.
    if (child.connected) child.send('close', (error) => error && child.kill());
    else child.kill();
    await exited;
  }
}
