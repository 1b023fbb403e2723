/**
 * The child side of the persisted local store (storeProcess.ts): dynalite on one LevelDB folder,
 * listening on a private loopback port that only its parent relays to. Plain JavaScript so the child
 * runs on a bare Node, whichever loader the parent was started with.
 *
 * dynalite throws a LevelDB error (a full disk, files made read-only, a corrupt table) from the
 * callback of the request it belongs to (`if (err) throw err` in its index.js), after that request
 * released its item lock, so nothing else is left half-done: the request is simply never answered.
 * Such an error is reported to the parent and the connections of the requests in flight are cut, so
 * that each answers 503 (a read retried by the SDK is served); LevelDB goes on serving reads. After an
 * I/O error LevelDB refuses every write until it is opened again: once the folder takes a write again
 * (space freed, permissions given back) the parent is told, and it starts another child. From the
 * first failed write until then, this process takes no write (storeWriteGate.mjs), nor after its
 * folder was deleted, which the parent is told once. A request its client cuts mid-body (dynalite
 * rethrows its `aborted` too) ends that request only. Any other uncaught error ends this process,
 * and the parent starts another.
 *
 * In: argv `<LevelDB folder> [--probe]`; IPC `close`.
 * Out: IPC `{type:'ready', port}`, `{type:'fault', message, fatal?}` (fatal: this process then exits),
 * `{type:'writable'}`, `{type:'gone'}`.
 */
import dynalite from 'dynalite';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { gateWrites, REFUSED_CODE, refuseWritesAtTheDoor } from './storeWriteGate.mjs';

const [path] = process.argv.slice(2);

/** Exits after telling the parent, in one line, what failed. */
function fail(error) {
  const cause = error?.cause ?? error;
  const message = String(cause instanceof Error ? cause.message : cause).split('\n')[0];
  process.send({ type: 'fault', message, fatal: true }, () => process.exit(1));
}

// Set before the folder opens, so that a stop asked meanwhile is not lost.
let closing = false;
let server;
process.on('message', (message) => {
  if (message !== 'close' || closing) return;
  closing = true;
  if (!server) process.exit(0);
  server.close((error) => process.exit(error ? 1 : 0));
  server.closeIdleConnections();
});

// A terminal's Ctrl-C (SIGINT to the whole process group) or a stop of the group (SIGTERM) reaches this
// process too: it is part of its parent's stop, which closes it (IPC `close`) once the requests in
// flight are answered; dying of it would cut them and read as a store fault.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => {});

// The parent is gone (a kill -9): LevelDB's log is its journal, so exiting here loses nothing acknowledged.
process.on('disconnect', () => {
  if (!closing) process.exit(0);
});

// dynalite opens its folder at the first request and, when that fails, answers `Database is closed`
// without the cause: opening it once first (`--probe`, after a fault) names the cause (no space
// left, no permission, corruption). A folder gone since the first start is not made anew.
const { Level } = createRequire(createRequire(import.meta.url).resolve('dynalite'))('level');
if (process.argv.includes('--probe')) {
  const probe = new Level(path, { createIfMissing: false });
  try {
    await probe.open();
    await probe.close();
  } catch (error) {
    fail(error);
    await new Promise(() => {});
  }
}

if (closing) process.exit(0);
const gate = gateWrites(Level, path, ({ gone }) => {
  if (gone) process.send({ type: 'gone' });
  else tellWhenWritable();
});
server = dynalite({ path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
refuseWritesAtTheDoor(server, gate);

/** Answers not yet sent: the one a LevelDB error belongs to is among them. */
const pending = new Set();
// A relayed keep-alive connection would keep close() waiting for ever: once closing, each answer
// ends its connection and idle ones are closed.
/** A request's own stream errors: its client cut it (`aborted` mid-body), which ends that request only. */
const cutRequests = new WeakSet();
server.on('request', (request, response) => {
  // Before dynalite's own listener, which rethrows the error where nothing catches it.
  request.prependListener('error', (error) => cutRequests.add(error));
  pending.add(response);
  response.once('close', () => pending.delete(response));
  response.once('finish', () => {
    if (closing) response.socket?.end();
  });
});

process.on('uncaughtException', (error) => {
  // Nothing of a cut request reached the store: dynalite reads the whole body before it acts.
  if (cutRequests.has(error)) return;
  if (typeof error?.code !== 'string' || !error.code.startsWith('LEVEL_')) return fail(error);
  // A write refused by the gate after the fault that closed it, which was said then.
  if (error.code === REFUSED_CODE) {
    for (const response of pending) response.socket?.destroy();
    return;
  }
  process.send({ type: 'fault', message: String(error.message).split('\n')[0] });
  for (const response of pending) response.socket?.destroy();
  if (error.code === 'LEVEL_IO_ERROR') tellWhenWritable();
});

const WRITE_PROBE = join(path, 'WRITE-PROBE');
const PROBE_MS = 500;
let probing;
/** Tells the parent once the folder takes a write of 64 kB again, so that LevelDB is opened anew. */
function tellWhenWritable() {
  probing ??= setInterval(() => {
    try {
      writeFileSync(WRITE_PROBE, Buffer.alloc(64 * 1024));
      rmSync(WRITE_PROBE);
    } catch {
      try {
        rmSync(WRITE_PROBE, { force: true });
      } catch {
        // an immutable folder: nothing was written
      }
      return;
    }
    clearInterval(probing);
    process.send({ type: 'writable' });
  }, PROBE_MS);
}

server.listen(0, '127.0.0.1', () => process.send({ type: 'ready', port: server.address().port }));
