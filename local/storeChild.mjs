/**
 * The child side of the persisted local store (storeProcess.ts): dynalite on one LevelDB folder,
 * listening on a private loopback port that only its parent relays to. Plain JavaScript so the child
 * runs on a bare Node, whichever loader the parent was started with.
 *
 * dynalite throws a LevelDB I/O error (a full disk, files made read-only, a corrupt table) from a
 * callback (`if (err) throw err` in its index.js): uncatchable by the request it belongs to. This
 * process is the boundary around that throw: it tells its parent what failed, in one line, and exits;
 * the parent keeps the public port, answers for it, and starts another.
 *
 * In: argv `<LevelDB folder>`; IPC `close`. Out: IPC `{type:'ready', port}`, `{type:'fault', message}`.
 */
import dynalite from 'dynalite';
import { createRequire } from 'node:module';

const [path] = process.argv.slice(2);

/** Exits after telling the parent, in one line, what failed. */
function fail(error) {
  const cause = error?.cause ?? error;
  const message = String(cause instanceof Error ? cause.message : cause).split('\n')[0];
  process.send({ type: 'fault', message }, () => process.exit(1));
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

// The parent is gone (a kill -9): LevelDB's log is its journal, so exiting here loses nothing acknowledged.
process.on('disconnect', () => {
  if (!closing) process.exit(0);
});

// dynalite opens its folder at the first request and, when that fails, answers `Database is closed`
// without the cause: opening it once first names the cause (no space left, no permission, corruption).
const { Level } = createRequire(createRequire(import.meta.url).resolve('dynalite'))('level');
const probe = new Level(path, { createIfMissing: true });
try {
  await probe.open();
  await probe.close();
} catch (error) {
  fail(error);
  await new Promise(() => {});
}

if (closing) process.exit(0);
server = dynalite({ path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });

process.on('uncaughtException', fail);

// A relayed keep-alive connection would keep close() waiting for ever: once closing, each answer
// ends its connection and idle ones are closed.
server.on('request', (_request, response) => {
  response.once('finish', () => {
    if (closing) response.socket?.end();
  });
});

server.listen(0, '127.0.0.1', () => process.send({ type: 'ready', port: server.address().port }));
