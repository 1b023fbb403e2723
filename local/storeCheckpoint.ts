/**
 * The persisted store's checkpoint: at each clean stop, the size and SHA-256 of every file of its
 * LevelDB folder, kept in `.data/checkpoint`. LevelDB replays a cut or corrupted write-ahead log
 * (`*.log`) without a word and starts with less, and a deleted one as an empty store; comparing the
 * files with the checkpoint before the store opens tells a clean state from a damaged one.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalSetupError } from '@petstore/local-kit/setupError';

type FileState = { bytes: number; sha256: string };

/**
 * The checkpoint's copy inside the LevelDB folder (a name LevelDB leaves alone): a copy of the folder
 * made while it is stopped carries it, so the folder restored from that copy proves itself a clean
 * state, of an earlier stop than `.data/checkpoint` describes.
 */
const OWN_CHECKPOINT = 'PETSTORE-CHECKPOINT';

/** LevelDB's own lock and info log change at every open and hold no data; nor does the store's write probe (storeChild.mjs). */
const NOT_DATA = new Set(['LOCK', 'LOG', 'LOG.old', 'WRITE-PROBE', OWN_CHECKPOINT]);

const checkpointFile = (dataDir: string) => join(dataDir, 'checkpoint');
const ownCheckpointFile = (dataDir: string) => join(dataDir, 'dynalite', OWN_CHECKPOINT);

function folderState(folder: string): Record<string, FileState> {
  const state: Record<string, FileState> = {};
  for (const name of readdirSync(folder).sort()) {
    if (NOT_DATA.has(name) || !statSync(join(folder, name)).isFile()) continue;
    const bytes = readFileSync(join(folder, name));
    state[name] = { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
  }
  return state;
}

/** After a clean close of the store in `dataDir/dynalite`: what the next start checks. */
export function writeCheckpoint(dataDir: string): void {
  const state = JSON.stringify(folderState(join(dataDir, 'dynalite')));
  writeFileSync(ownCheckpointFile(dataDir), state);
  writeFileSync(checkpointFile(dataDir), state);
}

/** The checkpoint in `file`, or undefined when it is not one (not JSON, `null`, a file's entry without its size or hash). */
function readCheckpoint(file: string): Record<string, FileState> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const fileState = (entry: unknown) =>
    typeof entry === 'object' &&
    entry !== null &&
    typeof (entry as FileState).bytes === 'number' &&
    typeof (entry as FileState).sha256 === 'string';
  return Object.values(value).every(fileState) ? (value as Record<string, FileState>) : undefined;
}

/**
 * Whether the folder, which the data folder's checkpoint finds changed, is a copy restored from an
 * earlier clean stop: it carries that stop's checkpoint and every file agrees with it.
 */
function restoredFromCleanCopy(dataDir: string, found: Record<string, FileState>): boolean {
  const own = existsSync(ownCheckpointFile(dataDir)) ? readCheckpoint(ownCheckpointFile(dataDir)) : undefined;
  return own !== undefined && damageOf(own, found).length === 0 && Object.keys(found).every((name) => name in own);
}

/** What differs from the checkpoint, one phrase per damaged file. */
function damageOf(expected: Record<string, FileState>, found: Record<string, FileState>): string[] {
  return Object.entries(expected).flatMap(([name, was]) => {
    const now = found[name];
    if (!now) return [`${name} (${was.bytes} bytes) is missing`];
    if (now.bytes < was.bytes) return [`${name} is cut from ${was.bytes} to ${now.bytes} bytes`];
    if (now.sha256 !== was.sha256) return [`${name} changed (${was.bytes} bytes then, ${now.bytes} now)`];
    return [];
  });
}

/**
 * Before the store opens after a clean stop: damage since then refuses the start in one line
 * (`refuseUnopenable` first when the damage may leave LevelDB unable to open it),
 * unless `keepDamaged` (PETSTORE_KEEP_DAMAGED_STORE=1): then what was damaged is returned, for the
 * start to say with what is readable once the store is open and repaired.
 * The checkpoint stays until the store is open (`dropCheckpoint`): a start that fails checks again.
 */
export async function checkCheckpoint(
  dataDir: string,
  keepDamaged: boolean,
  refuseUnopenable: () => Promise<void>,
): Promise<string | undefined> {
  const file = checkpointFile(dataDir);
  if (!existsSync(file)) return undefined;
  const folder = join(dataDir, 'dynalite');
  const expected = readCheckpoint(file);
  if (!expected)
    throw new LocalSetupError(
      `${file} cannot be read as a checkpoint: delete it (the next clean stop writes a new one).`,
    );
  const found = existsSync(folder) ? folderState(folder) : {};
  const damage = damageOf(expected, found);
  if (damage.length === 0) return undefined;
  if (restoredFromCleanCopy(dataDir, found)) {
    console.error(
      `Store: ${folder} is not the store of its last clean stop but a copy of an earlier one, intact against the checkpoint it carries: serving it.`,
    );
    return undefined;
  }
  // A damaged CURRENT or MANIFEST may leave a folder LevelDB cannot open at all: that refusal, with its way out, comes first.
  if (damage.some((phrase) => /^(CURRENT|MANIFEST-)/.test(phrase))) await refuseUnopenable();
  const what = `The local store ${folder} was damaged since its last clean stop (${damage.join('; ')}): the pets written there are lost or cannot be told`;
  if (!keepDamaged) {
    throw new LocalSetupError(
      `${what}. Restore ${folder} from a copy of it made after a clean stop (the copy carries its checkpoint), or set PETSTORE_KEEP_DAMAGED_STORE=1 to serve what is readable.`,
    );
  }
  return what;
}

/** Once the store is open: its files change from here, and only a clean stop says what they are. */
export function dropCheckpoint(dataDir: string): void {
  rmSync(checkpointFile(dataDir), { force: true });
  rmSync(ownCheckpointFile(dataDir), { force: true });
}
