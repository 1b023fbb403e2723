/** A test run leaves no temporary folder behind: its tests' and their processes' go in one folder of the run's, removed at its end. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/bundle/bundling.ts';
import { commandEnvironment } from '../support/cli.ts';

it('leaves the temporary folder as it found it, after tests that make folders and start processes there', () => {
  const temporary = mkdtempSync(join(tmpdir(), 'petstore-tmp-check-'));
  try {
    const env = { ...commandEnvironment({ TMPDIR: temporary }) };
    delete env.PETSTORE_TEST_RUN_TMPDIR;
    // Two refusals whose tests make data folders and start `npm start` on them.
    const run = spawnSync(
      process.execPath,
      [
        join(PROJECT_ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
        'run',
        'test/local/mistakes.test.ts',
        '-t',
        'PETSTORE_DATA_DIR',
      ],
      {
        cwd: PROJECT_ROOT,
        encoding: 'utf8',
        env,
      },
    );
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Tests: [1-9]\d* passed, 0 failed/m);
    expect(readdirSync(temporary)).toEqual([]);
  } finally {
    rmSync(temporary, { recursive: true, force: true });
  }
}, 120_000);
