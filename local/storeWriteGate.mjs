/**
 * The write gate of the store's child (storeChild.mjs): once a LevelDB write has failed, this
 * process takes no other write; only a child that opens the folder anew does.
 *
 * Why: LevelDB appends each write to its log and, when the append fails (a full disk, an immutable
 * file), keeps its place in the log as though the record had been written. Later appends that
 * succeed (space given back, or a small record that fits the disk's last page) land at offsets the
 * log's reader cannot follow, so the next open drops them: writes acknowledged then were lost
 * (issue 44). Writes are therefore sent to LevelDB one at a time, each only once the one before it
 * is known to have succeeded (its group commit is given up; a write without sync costs one
 * append), and the first failure refuses every later one.
 *
 * The same gate closes for good when the store's folder is deleted or replaced while it serves:
 * LevelDB would go on writing to its files, gone with the folder.
 *
 * Writes refused before dynalite starts them are answered 503 ServiceUnavailable, as DynamoDB
 * answers when it cannot serve; reads are served from what this process holds.
 */
import { statSync } from 'node:fs';

/** The LevelDB calls that write (abstract-level's private methods, which every public write reaches). */
const WRITES = ['_put', '_del', '_batch', '_clear'];
/** The DynamoDB operations that only read: served while writes are refused. */
const READS = new Set([
  'GetItem',
  'BatchGetItem',
  'Query',
  'Scan',
  'DescribeTable',
  'ListTables',
  'TransactGetItems',
  'DescribeTimeToLive',
  'ListTagsOfResource',
]);
/** How often the folder is looked for between writes, so that its deletion is said without a write. */
const FOLDER_CHECK_MS = 1_000;

/** Thrown by a write refused once the gate is closed: the store's own fault was already reported. */
export const REFUSED_CODE = 'LEVEL_WRITES_REFUSED';

/** The folder's device and inode, or undefined when it is gone. */
function identityOf(folder) {
  try {
    const { dev, ino } = statSync(folder);
    return `${dev}:${ino}`;
  } catch (error) {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
    // Not a deletion (a folder that cannot be searched): the writes themselves tell.
    return 'unknown';
  }
}

/**
 * Gates the writes of every `Level` of this process on `folder`. `closed(why)` is called once, with
 * `{ gone: false, message }` at the first failed write, or `{ gone: true }` when the folder is gone.
 */
export function gateWrites(Level, folder, closed) {
  // The folder's, from the first look that finds it (a new store's folder is made as it opens).
  let identity;
  let refusal;
  const close = (why) => {
    if (refusal) return;
    refusal = why;
    closed(why);
  };
  const checkFolder = () => {
    const now = identityOf(folder);
    if (now === 'unknown') return;
    identity ??= now;
    if (now !== identity) close({ gone: true });
  };
  checkFolder();
  setInterval(checkFolder, FOLDER_CHECK_MS).unref();
  let last = Promise.resolve();
  for (const name of WRITES) {
    const write = Level.prototype[name];
    Level.prototype[name] = function gatedWrite(...args) {
      const run = last.then(async () => {
        checkFolder();
        if (refusal) {
          throw Object.assign(new Error('Writes are refused until the store is opened again'), { code: REFUSED_CODE });
        }
        try {
          return await write.apply(this, args);
        } catch (error) {
          close({ gone: false, message: String(error?.message ?? error).split('\n')[0] });
          throw error;
        }
      });
      last = run.catch(() => {});
      return run;
    };
  }
  return { refused: () => refusal !== undefined };
}

/**
 * Puts `gate` in front of dynalite's request listener on `server`: while writes are refused, a
 * request for an operation that writes is answered 503 before dynalite starts it.
 */
export function refuseWritesAtTheDoor(server, gate) {
  const listeners = server.listeners('request');
  server.removeAllListeners('request');
  server.on('request', (request, response) => {
    const operation = String(request.headers['x-amz-target'] ?? '').split('.')[1];
    if (!gate.refused() || READS.has(operation)) {
      for (const listener of listeners) listener.call(server, request, response);
      return;
    }
    request.resume();
    response.writeHead(503, { 'Content-Type': 'application/x-amz-json-1.0' });
    response.end(
      JSON.stringify({
        __type: 'com.amazonaws.dynamodb.v20120810#ServiceUnavailable',
        message: 'The local store takes no write until it is opened again.',
      }),
    );
  });
}
