/**
 * The suite's tiers (vitest.config.ts): every test file runs in exactly one, so `npm run test:unit`
 * is the inner loop and `npm test` still runs everything. A test file in a folder no tier names
 * would otherwise never run, in any of them.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TIERS } from '../../vitest.config.ts';
import { ROOT, read, repositoryFiles } from './sources.ts';

/** `[tier] file` for every test file, as vitest itself lists them. */
function listed(): Array<{ tier: string; file: string }> {
  const run = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'list', '--filesOnly'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout
    .split('\n')
    .map((line) => /^\[(\w+)\] (\S+)$/.exec(line.trim()))
    .filter((match) => match !== null)
    .map((match) => ({ tier: match[1]!, file: match[2]! }));
}

describe('the tiers of the suite', () => {
  const files = listed();

  it('hold every test file of the repository, each in one tier', () => {
    const testFiles = repositoryFiles().filter((path) => path.endsWith('.test.ts'));
    expect(testFiles.length).toBeGreaterThan(90);
    expect(files.map(({ file }) => file).sort()).toEqual(testFiles);
  });

  it('are the four the config names, none empty', () => {
    expect(new Set(files.map(({ tier }) => tier))).toEqual(new Set(Object.keys(TIERS)));
  });

  it('keep the stage emulator, the CDK app and the stress runs out of the inner loop', () => {
    const unit = files.filter(({ tier }) => tier === 'unit').map(({ file }) => file);
    expect(unit.filter((file) => /^(tools\/stage-emulator|test\/infra|test\/local)\//.test(file))).toEqual([]);
    expect(unit).not.toContain('test/contract/contentEncoding.test.ts');
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['test:unit']).toBe('vitest run --project unit');
    expect(scripts.test).toMatch(/vitest run$/);
  });
});
