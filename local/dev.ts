/**
 * `npm run dev`: the local API (`npm start`, local/server.ts) restarted on every change under
 * functions/ or lib/. The handlers are ES modules Node cannot unload, so a reload is a new server
 * process on the same port; the embedded store persists under `.data/` with the key that reads it,
 * so data and key survive the restart. The first start prints the server's banner; each reload
 * prints one line (what changed, how long until the new server listened). Ctrl-C stops both.
 *
 * PETSTORE_SOURCE_ROOT (a test seam; default: the repository) names the folder whose functions/ and
 * lib/ are watched and whose local/server.ts is run, so its handlers are the ones served: a test
 * points it at a copy and edits the copy. The store stays under `.data/` of the working directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { watch } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { PROJECT_ROOT } from '../infra/bundle/bundling.ts';
import { BUNDLED_SOURCES } from '../tools/stage-emulator/src/watch.ts';

const SOURCE_ROOT = resolve(process.env.PETSTORE_SOURCE_ROOT || PROJECT_ROOT);
/** The server script of the source root: it loads the handlers beside it (local/handlers.ts). */
const SERVER = join(SOURCE_ROOT, 'local', 'server.ts');
/** The server's line once it accepts requests, and the last line of its banner. */
const LISTENING = /^Pet Store API listening on /;
const BANNER_END = /^Docs: /;
/** Edits arrive as bursts of events: one restart per burst. */
const SETTLE_MS = 25;

let server: ChildProcess | undefined;
let stopping = false;

/** Starts the server; resolves once it listens and its banner is out (or it has exited). `quiet` drops the banner. */
function startServer(quiet: boolean): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  server = child;
  return new Promise((resolve) => {
    let inBanner = quiet;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      // A server being replaced says only that it stops: not worth a line.
      if (child !== server) return;
      if (quiet ? LISTENING.test(line) : BANNER_END.test(line)) resolve();
      if (!inBanner) console.log(line);
      if (BANNER_END.test(line)) inBanner = false;
    });
    child.once('exit', () => resolve());
  });
}

function stopServer(): Promise<void> {
  const child = server;
  server = undefined;
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

let pending = new Set<string>();
let timer: NodeJS.Timeout | undefined;
let queue: Promise<void> = Promise.resolve();

function onChange(file: string): void {
  pending.add(relative(SOURCE_ROOT, file));
  clearTimeout(timer);
  timer = setTimeout(() => {
    const changed = [...pending].join(', ');
    pending = new Set();
    queue = queue.then(async () => {
      if (stopping) return;
      const started = performance.now();
      await stopServer();
      await startServer(true);
      console.log(`reload: ${changed} changed; restarted the local API (handlers, same port, data and key kept) in ${Math.round(performance.now() - started)} ms`);
    });
  }, SETTLE_MS);
}

for (const folder of BUNDLED_SOURCES) {
  const root = join(SOURCE_ROOT, folder);
  watch(root, { recursive: true }, (_event, name) => name && onChange(join(root, name.toString())));
}
await startServer(false);
console.log(`Watching ${BUNDLED_SOURCES.join('/ and ')}/: a change restarts the handlers.`);

const stop = () => {
  if (stopping) return;
  stopping = true;
  void stopServer().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
