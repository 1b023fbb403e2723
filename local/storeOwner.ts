/**
 * Which process holds a data folder's store, and proof that a store is that folder's, so that no
 * write is ever acknowledged into another store (a stale `.data/endpoint` whose port another server
 * took after a kill -9).
 *
 * - A random store id lives in the data folder (`store-id`) and inside the store (an item of the
 *   control table); the holder checks they agree at every start, a process sharing the store asks
 *   the endpoint for it before using it.
 * - `.data/endpoint` records the holder's endpoint, process id and process start time: a store is
 *   shared only while that process lives, and a sharer stops when it is gone.
 * - Starts on one folder take turns (`withStartLock`), so of two at the same instant one opens the
 *   store and the other shares it.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createDocumentClient } from '../lib/store/dynamo.ts';
import { LocalSetupError } from '@petstore/local-kit/setupError';
import { openLevel } from '@petstore/local-kit/store';

export interface EndpointRecord {
  endpoint: string;
  /** The holder; absent in a record written by hand or by an older version (never shared then). */
  pid?: number;
  started?: string;
  /** The data folder it was written in, and that folder's identity (device and inode), which a copy does not share. */
  folder?: string;
  folderId?: string;
}

const STORE_ID_KEY = { pk: 'local-store', sk: 'id' } as const;

/** The record in `file`: JSON, or a bare endpoint URL (no holder named). */
export function readEndpointRecord(file: string): EndpointRecord | undefined {
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8').trim();
  try {
    const record = JSON.parse(text) as EndpointRecord;
    if (typeof record.endpoint === 'string') return record;
  } catch {
    // not JSON: a bare endpoint
  }
  return { endpoint: text };
}

/** Written aside and renamed into place, so a reader never sees half of it. */
export function writeEndpointRecord(file: string, endpoint: string): void {
  const folder = dirname(resolve(file));
  const record: EndpointRecord = {
    endpoint,
    pid: process.pid,
    started: processStart(process.pid) ?? '',
    folder,
    folderId: folderIdentity(folder),
  };
  writeFileSync(`${file}.${process.pid}.new`, JSON.stringify(record));
  renameSync(`${file}.${process.pid}.new`, file);
}

/** A folder's device and inode: a copy (`cp -r .data copy`) has its own, a folder moved (`mv`) keeps its. */
function folderIdentity(folder: string): string {
  const { dev, ino } = statSync(folder);
  return `${dev}:${ino}`;
}

/**
 * The folder a record was written in when it is not `dataDir`: the record came with a copy of that
 * folder and names that folder's store, never this one's. Undefined for a record of this folder, or
 * one that does not say (written by an older version).
 */
export function copiedFrom(record: EndpointRecord, dataDir: string): string | undefined {
  if (!record.folderId || record.folderId === folderIdentity(dataDir)) return undefined;
  return record.folder ?? '(unrecorded)';
}

/** A process's start time (clock ticks since boot, /proc/<pid>/stat), which tells it from a later one with its id. */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Whether the process a record names is still running (the same one: same start time where /proc tells it). */
export function holderAlive(record: EndpointRecord): boolean {
  if (!record.pid) return false;
  try {
    process.kill(record.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const started = processStart(record.pid);
  return !record.started || started === undefined || started === record.started;
}

/** The store id the store at `endpoint` holds; undefined when it holds none or does not answer as DynamoDB. */
export async function storeIdAt(endpoint: string, controlTableName: string): Promise<string | undefined> {
  const documents = createDocumentClient({ endpoint, attemptTimeoutMs: 1_000 });
  try {
    const { Item } = await documents.send(
      new GetCommand({ TableName: controlTableName, Key: STORE_ID_KEY, ConsistentRead: true }),
    );
    return typeof Item?.storeId === 'string' ? Item.storeId : undefined;
  } catch {
    return undefined;
  } finally {
    documents.destroy();
  }
}

/** The data folder's store id, when it has one. */
export const folderStoreId = (dataDir: string): string | undefined => {
  const file = join(dataDir, 'store-id');
  return existsSync(file) ? readFileSync(file, 'utf8').trim() || undefined : undefined;
};

/**
 * For the process that opened the folder's store itself: the store id the folder and the store
 * agree on, written to whichever lacks it (a new store, a store or folder from before ids). Ids that
 * differ mean the LevelDB folder came from another data folder: refused in one line.
 */
export async function markStore(endpoint: string, controlTableName: string, dataDir: string): Promise<string> {
  const file = join(dataDir, 'store-id');
  const inFolder = folderStoreId(dataDir);
  const inStore = await storeIdAt(endpoint, controlTableName);
  if (inFolder && inStore && inFolder !== inStore) {
    throw new LocalSetupError(
      `The store in ${join(dataDir, 'dynalite')} is not this data folder's (store id ${inStore}, ${file} says ${inFolder}): ` +
        `put back the folder's own dynalite/, or delete ${file} to adopt this store.`,
    );
  }
  const id = inStore ?? inFolder ?? randomBytes(16).toString('hex');
  if (!inStore) {
    const documents = createDocumentClient({ endpoint });
    try {
      await documents.send(new PutCommand({ TableName: controlTableName, Item: { ...STORE_ID_KEY, storeId: id } }));
    } finally {
      documents.destroy();
    }
  }
  if (inFolder !== id) writeFileSync(file, id);
  return id;
}

const LOCK_POLL_MS = 50;
const LOCK_WAIT_MS = 120_000;

/**
 * Runs `start` while holding the folder's start lock: a LevelDB folder (`start-lock/`) opened for
 * the time, whose lock the OS releases when its holder dies, so a kill never leaves it taken.
 */
export async function withStartLock<T>(dataDir: string, start: () => Promise<T>): Promise<T> {
  const lock = await takeLock(join(dataDir, 'start-lock'));
  try {
    return await start();
  } finally {
    await lock.close();
  }
}

async function takeLock(path: string): Promise<{ close(): Promise<void> }> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    const db = openLevel(path);
    try {
      await db.open();
      return db;
    } catch (error) {
      const code = (error as { cause?: { code?: string } }).cause?.code;
      if (code !== 'LEVEL_LOCKED')
        throw new LocalSetupError(
          `The start lock ${path} cannot be opened (${code ?? String(error)}): delete it; it holds no data.`,
        );
      if (Date.now() > deadline)
        throw new LocalSetupError(
          `Another start on ${path.replace(/\/start-lock$/, '')} has held it for ${LOCK_WAIT_MS / 1000} s: stop it, or use another PETSTORE_DATA_DIR.`,
        );
    }
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
}

const WATCH_MS = 200;

/**
 * Calls `gone` once the holder of a shared store stops (cleanly or not): from then its port may be
 * anyone's, so the sharer must not send it another write. Returns the stop of the watch.
 */
export function watchHolder(record: EndpointRecord, gone: () => void): () => void {
  const timer = setInterval(() => {
    if (holderAlive(record)) return;
    clearInterval(timer);
    gone();
  }, WATCH_MS);
  timer.unref();
  return () => clearInterval(timer);
}
