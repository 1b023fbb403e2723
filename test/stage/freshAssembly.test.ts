/**
 * When the runner synthesizes again: `npx cdk ls` (which docs/deploying.md calls safe offline)
 * writes a fresh manifest and templates but no function's bundle; the runner must take that
 * assembly as stale, not stop on the first function it cannot start.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/bundle/bundling.ts';
import { hasEveryBundle, readStack } from '../../tools/stage-emulator/src/cloudAssembly.ts';
import { ensureCloudAssembly, isFresh } from '../../tools/stage-emulator/src/freshAssembly.ts';
import { DEFAULT_OUTDIR, STAGE_APP } from '../../local/stageApp.ts';

const made: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-assembly-'));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describe('a cloud assembly without its bundles', () => {
  it('is what cdk ls writes, and the runner takes it as stale', () => {
    const outdir = join(scratch(), 'cdk.out');
    const ls = spawnSync(
      join(PROJECT_ROOT, 'node_modules', '.bin', 'cdk'),
      ['ls', '--no-notices', '--output', outdir],
      {
        cwd: PROJECT_ROOT,
        encoding: 'utf8',
        env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true' },
      },
    );
    expect(ls.status, ls.stderr).toBe(0);
    expect(ls.stdout).toMatch(/PetStore-staging/);
    expect(readdirSync(outdir)).toContain('manifest.json');
    expect(hasEveryBundle(outdir)).toBe(false);
    expect(isFresh(outdir, STAGE_APP)).toBe(false);
  }, 120_000);

  it('is stale when one function of a fresh assembly lost its bundle, and fresh again once synthesized', async () => {
    await ensureCloudAssembly(DEFAULT_OUTDIR, STAGE_APP, { quiet: true });
    expect(isFresh(DEFAULT_OUTDIR, STAGE_APP)).toBe(true);
    const copy = join(scratch(), 'cdk.out');
    cpSync(DEFAULT_OUTDIR, copy, { recursive: true });
    expect(hasEveryBundle(copy)).toBe(true);
    // A function's asset, not a custom resource's (those hold an index.js too).
    const stack = readStack(copy, 'PetStore-staging');
    const [fn] = Object.entries(stack.template.Resources).filter(
      ([, resource]) => resource.Type === 'AWS::Lambda::Function' && resource.Metadata?.['aws:asset:path'],
    );
    const asset = stack.assetDir(fn![0]);
    for (const file of readdirSync(asset)) rmSync(join(asset, file));
    expect(hasEveryBundle(copy)).toBe(false);
    expect(isFresh(copy, STAGE_APP)).toBe(false);
  }, 300_000);
});
