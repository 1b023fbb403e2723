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

/** LevelDB's own lock and info log change at every open and hold no data; nor does the store's write probe (storeChild.mjs). */
const NOT_DATA = new Set(['LOCK', 'LOG', 'LOG.old', 'WRITE-PROBE']);

const checkpointFile = (dataDir: string) => join(dataDir, 'checkpoint');

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
  writeFileSync(checkpointFile(dataDir), JSON.stringify(folderState(join(dataDir, 'dynalite'))));
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
  let expected: Record<string, FileState>;
  try {
    expected = JSON.parse(readFileSync(file, 'utf8')) as Record<string, FileState>;
  } catch {
    throw new LocalSetupError(
      `${file} cannot be read as a checkpoint: delete it (the next clean stop writes a new one).`,
    );
  }
  const damage = damageOf(expected, existsSync(folder) ? folderState(folder) : {});
  if (damage.length === 0) return undefined;
  // A damaged CURRENT or MANIFEST may leave a folder LevelDB cannot open at all: that refusal, with its way out, comes first.
  if (damage.some((phrase) => /^(CURRENT|MANIFEST-)/.test(phrase))) await refuseUnopenable();
  const what = `The local store ${folder} was damaged since its last clean stop (${damage.join('; ')}): the pets written there are lost or cannot be told`;
  if (!keepDamaged) {
    throw new LocalSetupError(
      `${what}. Restore ${folder} from a backup, or set PETSTORE_KEEP_DAMAGED_STORE=1 to serve what is readable.`,
    );
  }
  return what;
}

/** Once the store is open: its files change from here, and only a clean stop says what they are. */
export const dropCheckpoint = (dataDir: string): void => rmSync(checkpointFile(dataDir), { force: true });
