/**
 * Without chromium the /docs browser test is skipped, and the run says so and how to install it in
 * its last lines (test/support/summaryReporter.ts), where a warning printed by a test is hidden.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/bundle/bundling.ts';
import { commandEnvironment } from '../support/cli.ts';

it('ends the run with the skipped browser test and the command that installs chromium', () => {
  const run = spawnSync(
    process.execPath,
    [join(PROJECT_ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', 'test/local/docs.test.ts'],
    {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      env: commandEnvironment({ CHROMIUM_PATH: '/nonexistent/chromium' }),
    },
  );
  expect(run.status, run.stderr).toBe(0);
  const lines = run.stdout.trimEnd().split('\n');
  expect(lines.at(-1)).toMatch(/^Tests: \d+ passed, 0 failed, 1 skipped$/);
  expect(lines).toContain(
    'Skipped: test/local/docs.test.ts > renders /docs in Chromium: no chromium at /nonexistent/chromium; install it: sudo apt-get install -y --no-install-recommends chromium (or set CHROMIUM_PATH)',
  );
}, 120_000);
