/**
 * LevelDB's own repair of a store folder (`RepairDB`), for PETSTORE_KEEP_DAMAGED_STORE=1 when a corrupt
 * table stops the start before anything is readable (the store's own records are in it): LevelDB
 * keeps every record it can read, moves each file it cannot into `lost/` inside the folder, and
 * writes a new manifest, so the store opens with what was readable.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';

type LevelWithRepair = { repair(location: string): Promise<void> };

/** Repairs the LevelDB folder `folder` (closed: no process may hold it); returns where unreadable files went. */
export async function salvageLevel(folder: string): Promise<string> {
  // The Level dynalite itself opens the folder with, as dynalite resolves it.
  const require = createRequire(import.meta.url);
  const { Level } = createRequire(require.resolve('dynalite'))('level') as { Level: LevelWithRepair };
  await Level.repair(folder);
  return join(folder, 'lost');
}
