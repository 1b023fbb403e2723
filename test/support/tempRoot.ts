/**
 * vitest's globalSetup: every temporary folder a run makes, in the tests and in the processes they
 * start (`os.tmpdir()` reads TMPDIR), lives in one folder of the run's own, removed when the run
 * ends, so a run leaves no `petstore-*` folder behind. Each tier runs this setup; the first one
 * makes the folder and the others share it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const RUN_FOLDER = 'PETSTORE_TEST_RUN_TMPDIR';

export default function setup(): (() => void) | undefined {
  if (process.env[RUN_FOLDER]) return undefined;
  const folder = mkdtempSync(join(tmpdir(), 'petstore-test-run-'));
  const previous = process.env.TMPDIR;
  process.env[RUN_FOLDER] = folder;
  process.env.TMPDIR = folder;
  return () => {
    rmSync(folder, { recursive: true, force: true });
    delete process.env[RUN_FOLDER];
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
  };
}
