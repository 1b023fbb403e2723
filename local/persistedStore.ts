/**
 * dynalite on `.data/`. LevelDB lets one process open a folder at a time, so the process that
 * holds it writes its endpoint beside it and a second process (invoke while the API runs) uses that,
 * once the store there proves to be this folder's (local/storeOwner.ts). A clean close removes the
 * file, so a file left whose holder is gone means the last run died (kill -9, a crash): the store
 * is repaired before anything uses it (local/storeRepair.ts). The endpoint is written after the
 * repair, so a kill during it leaves the old one and the next start repairs again.
 *
 * A LevelDB fault while serving (local/storeProcess.ts) leaves `store-faulted` beside the store
 * (local/storeFaultMarker.ts): a write it cut may have left its index entry without its pet, so the
 * next start repairs too. A store folder deleted while it serves takes no write from then, and its
 * stop writes nothing there.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { storeFolderProblem } from '@petstore/local-kit/store';
import { ensureControlTable, startEmbeddedStore, type EmbeddedStore } from './embeddedStore.ts';
import { repairPetsTable } from './storeRepair.ts';
import {
  copiedFrom,
  folderStoreId,
  holderAlive,
  markStore,
  readEndpointRecord,
  storeIdAt,
  watchHolder,
  withStartLock,
  writeEndpointRecord,
  type EndpointRecord,
} from './storeOwner.ts';
import { checkCheckpoint, dropCheckpoint, writeCheckpoint } from './storeCheckpoint.ts';
import { faultMarker } from './storeFaultMarker.ts';
import { salvageLevel } from './storeSalvage.ts';
import { LocalSetupError } from '@petstore/local-kit/setupError';

/** The files of a data folder this module reads and writes. */
const filesOf = (dataDir: string) => ({
  level: join(dataDir, 'dynalite'),
  endpoint: join(dataDir, 'endpoint'),
  /** Checked once by the repair (a store kept from before repairs). */
  checked: join(dataDir, 'store-checked'),
  /** Left by a store fault: the next start repairs. */
  faulted: join(dataDir, 'store-faulted'),
});

export interface PersistedStore {
  store: { endpoint: string; embedded: boolean; persistent: true; sharedWith?: string };
  holderGone: Promise<void> | undefined;
  close(): Promise<void>;
}

export async function persistentStore(
  dataDir: string,
  tableName: string,
  controlTableName: string,
  keepDamaged: boolean,
): Promise<PersistedStore> {
  return withStartLock(dataDir, async () => {
    const record = readEndpointRecord(filesOf(dataDir).endpoint);
    const copied = record && copiedFrom(record, dataDir);
    if (copied)
      console.error(
        `Store: ${filesOf(dataDir).endpoint} was copied from ${copied} with the folder; it names that folder's store, not this one's: this copy opens its own.`,
      );
    else if (record && (await sharable(record, dataDir, controlTableName))) {
      const stopWatch = { stop: () => {} };
      const store = { endpoint: record.endpoint, embedded: false, persistent: true as const, sharedWith: dataDir };
      const holderGone = new Promise<void>((resolve) => (stopWatch.stop = watchHolder(record, resolve)));
      return { store, holderGone, close: async () => stopWatch.stop() };
    }
    const unclean = record !== undefined;
    // After an unclean stop no checkpoint tells the files (the repair handles that case).
    const damage = unclean
      ? undefined
      : await checkCheckpoint(dataDir, keepDamaged, () => refuseUnopenable(filesOf(dataDir).level));
    const options = { dataDir, tableName, controlTableName, unclean, copied: !!copied, damage, keepDamaged };
    try {
      return await ownStore(options);
    } catch (error) {
      if (!(keepDamaged && error instanceof UnreadableStoreError)) throw error;
      // Nothing readable without LevelDB's own repair (the store's records are in the corrupt table).
      const lost = await salvageLevel(filesOf(dataDir).level);
      const salvaged = `${error.what}; LevelDB's repair kept what it could read and moved what it could not to ${lost}`;
      return ownStore({ ...options, unclean: true, damage: damage ? `${damage}; ${salvaged}` : salvaged });
    }
  });
}

/**
 * Whether the record's store can be shared: its holder runs and the store at its endpoint holds this
 * folder's store id. A record that fails either is stale; one whose endpoint answers is said in one line.
 */
async function sharable(record: EndpointRecord, dataDir: string, controlTableName: string): Promise<boolean> {
  const id = folderStoreId(dataDir);
  const alive = holderAlive(record);
  if (alive && id && (await storeIdAt(record.endpoint, controlTableName)) === id) return true;
  if (!alive && !(await reachable(record.endpoint))) return false;
  const why = alive
    ? "the store there is not this data folder's"
    : `its process ${record.pid ?? '(unrecorded)'} is gone and another server answers there`;
  console.error(`Store: ${filesOf(dataDir).endpoint} names ${record.endpoint}, but ${why}; it is not used.`);
  return false;
}

interface OwnStoreOptions {
  dataDir: string;
  tableName: string;
  controlTableName: string;
  /** The last run did not stop cleanly (its endpoint file is left). */
  unclean: boolean;
  /** The data folder is a copy of one whose store was open (its endpoint file came with it). */
  copied?: boolean;
  /** Damage found against the checkpoint and kept (PETSTORE_KEEP_DAMAGED_STORE=1): what it was. */
  damage: string | undefined;
  keepDamaged: boolean;
}

/** The folder's store opened by this process: checked as its own, repaired when it may need it, then published. */
async function ownStore({
  dataDir,
  tableName,
  controlTableName,
  unclean,
  copied,
  damage,
  keepDamaged,
}: OwnStoreOptions): Promise<PersistedStore> {
  const { level: folder, faulted: faultedFile, endpoint: endpointFile } = filesOf(dataDir);
  await refuseUnopenable(folder);
  let serving = false;
  let gone = false;
  const marker = faultMarker(faultedFile);
  const embedded = await startEmbeddedStore({
    path: folder,
    onFault: (message, first) => {
      if (!gone) marker.record();
      // During the start, a fault ends it with its own one line (see unreadable).
      if (serving && first)
        console.error(
          `Store: the local store ${folder} failed (${message}); the requests that touch it answer 503 until it is fixed, the others are served.`,
        );
    },
    onGone: () => {
      gone = true;
      marker.abandon();
      console.error(
        `Store: the local store ${folder} was deleted while the local API ran; writes answer 503 until it is restarted, reads serve what this run still holds, and the next start makes a new, empty store.`,
      );
    },
  });
  try {
    await ensureControlTable(embedded.endpoint, controlTableName);
    dropCheckpoint(dataDir);
    await markStore(embedded.endpoint, controlTableName, dataDir);
    await repairWhenNeeded({ dataDir, tableName, unclean, copied, damage, keepDamaged }, embedded);
  } catch (error) {
    await embedded.close();
    throw unreadable(folder, embedded, keepDamaged, error);
  }
  serving = true;
  writeEndpointRecord(endpointFile, embedded.endpoint);
  return {
    store: { endpoint: embedded.endpoint, embedded: true, persistent: true },
    holderGone: undefined,
    close: async () => {
      await embedded.close();
      // A folder deleted meanwhile has nothing to check; one made anew there is another run's.
      if (gone) return;
      marker.settle();
      writeCheckpoint(dataDir);
      rmSync(endpointFile, { force: true });
    },
  };
}

/**
 * The repair, when the store may need it: after an unclean stop or a fault, with damage kept, and
 * once for a store kept from before repairs (it may hold phantoms from a kill whose endpoint file a
 * later clean stop removed; an empty or new store costs ms). With damage kept, a repair that a
 * corrupt table stops is said, and what is readable is served.
 */
async function repairWhenNeeded(
  { dataDir, tableName, unclean, copied, damage, keepDamaged }: Omit<OwnStoreOptions, 'controlTableName'>,
  embedded: EmbeddedStore,
): Promise<void> {
  const { checked: checkedFile, faulted: faultedFile, level } = filesOf(dataDir);
  const faulted = existsSync(faultedFile);
  if (!unclean && !faulted && !damage && existsSync(checkedFile)) return;
  let result: Awaited<ReturnType<typeof repairPetsTable>>;
  try {
    result = await repairPetsTable(embedded.endpoint, tableName);
  } catch (error) {
    const fault = embedded.faults?.at(-1);
    if (!keepDamaged || !fault) throw error;
    console.error(
      `Store: ${damage ?? `The local store ${level} cannot be read in full (${fault})`}; the repair stopped there (${fault}); serving what is readable (PETSTORE_KEEP_DAMAGED_STORE=1).`,
    );
    return;
  }
  const { repaired, reindexed, pets, ms } = result;
  const fixed = `repaired ${repaired} index entries without their pet and ${reindexed} pets missing from their status listing in ${Math.round(ms)} ms`;
  if (damage)
    console.error(`Store: ${damage}; serving the ${pets} pets readable (PETSTORE_KEEP_DAMAGED_STORE=1), ${fixed}.`);
  else {
    const why = copied
      ? 'the folder was copied while its store was open'
      : unclean
        ? 'the last run did not stop cleanly'
        : faulted
          ? 'the last run had a store fault'
          : 'first check of a store kept from before repairs';
    if (unclean || faulted || repaired + reindexed > 0) console.error(`Store: ${why}; ${fixed}.`);
  }
  writeFileSync(checkedFile, '');
  rmSync(faultedFile, { force: true });
}

/** A start that failed because the store faulted (a corrupt table read by the start itself): one line, and the ways out. */
class UnreadableStoreError extends LocalSetupError {
  /** What failed, without the ways out. */
  readonly what: string;

  constructor(folder: string, fault: string, keepDamaged: boolean) {
    const what = `The local store ${folder} cannot be read (${fault})`;
    const keep = keepDamaged ? '' : ', or set PETSTORE_KEEP_DAMAGED_STORE=1 to serve what is readable';
    super(
      `${what}: restore it from a backup, or move it aside (mv ${folder} ${folder}.broken) to start with an empty store${keep}.`,
    );
    this.what = what;
  }
}

function unreadable(folder: string, embedded: EmbeddedStore, keepDamaged: boolean, error: unknown): unknown {
  const fault = embedded.faults?.at(-1);
  if (!fault || error instanceof LocalSetupError) return error;
  return new UnreadableStoreError(folder, fault, keepDamaged);
}

/** How long a lock left by a store's process that is exiting (its parent was killed) may take to go. */
const LOCK_GRACE_MS = 2_000;

/** A store folder LevelDB cannot open stops the start in one line naming it and the remedy. */
async function refuseUnopenable(folder: string): Promise<void> {
  let problem = await storeFolderProblem(folder);
  for (const deadline = Date.now() + LOCK_GRACE_MS; problem?.code === 'LEVEL_LOCKED' && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    problem = await storeFolderProblem(folder);
  }
  if (!problem) return;
  if (problem.code === 'LEVEL_LOCKED') {
    throw new LocalSetupError(
      `The local store ${folder} is held by another process (${problem.message}): stop it, or use another PETSTORE_DATA_DIR.`,
    );
  }
  throw new LocalSetupError(
    `The local store ${folder} cannot be opened (${problem.message}): move it aside (mv ${folder} ${folder}.broken) ` +
      'or delete it to start with an empty store; the pets in it are lost, the API key and cursor secret beside it are kept.',
  );
}

async function reachable(endpoint: string): Promise<boolean> {
  try {
    await fetch(endpoint, { signal: AbortSignal.timeout(500) });
    return true;
  } catch {
    return false;
  }
}
