/**
 * CI's script (.ci/run) and what it installs: no dependency's install script runs (the
 * README's `npm ci && npm test`: .npmrc sets ignore-scripts for every npm (test/platform/installScripts.test.ts),
 * and package.json's `allowScripts` refuses each one the lock file has, a new one failing here until
 * someone decides about it), and
 * cfn-lint is the pinned version the runner brings, checked in one line before anything else, never
 * pip-installed unhashed. The script runs for real, with `npm`, `cfn-lint` and `chromium` stood in
 * for on its PATH, each recording how it was called.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CFN_LINT_VERSION } from '../infra/cfnLint.ts';

const ROOT = resolve(import.meta.dirname, '../..');

describe('install scripts', () => {
  it("are each refused by package.json's allowScripts, exactly the packages of the lock file that have one", () => {
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { hasInstallScript?: boolean }>;
    };
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript)
      .map(([path]) => path.replace(/^.*node_modules\//, ''))
      .sort();
    const { allowScripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      allowScripts: Record<string, boolean>;
    };
    expect(withScripts).toEqual(['@scarf/scarf', 'classic-level', 'esbuild']);
    expect(Object.keys(allowScripts).sort()).toEqual(withScripts);
    expect(Object.values(allowScripts)).toEqual(withScripts.map(() => false));
  });
});

describe('.ci/run', () => {
  let dir: string;
  const log = () => join(dir, 'calls.log');

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ci-run-'));
    const standIn = (name: string, body: string) => {
      writeFileSync(join(dir, name), `#!/usr/bin/env bash\necho "${name} $*" >> "${log()}"\n${body}\n`);
      chmodSync(join(dir, name), 0o755);
    };
    standIn('npm', 'exit 0');
    standIn('chromium', 'exit 0');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** .ci/run with the stand-ins first on PATH, and `cfn-lint` answering `version` (none: not installed). */
  function ciRun(version: string | undefined): Promise<{ code: number; stderr: string; calls: string[] }> {
    writeFileSync(log(), '');
    rmSync(join(dir, 'cfn-lint'), { force: true });
    if (version !== undefined) {
      writeFileSync(
        join(dir, 'cfn-lint'),
        `#!/usr/bin/env bash\necho "cfn-lint $*" >> "${log()}"\necho "cfn-lint ${version}"\n`,
      );
      chmodSync(join(dir, 'cfn-lint'), 0o755);
    }
    return new Promise((done) => {
      execFile(
        join(ROOT, '.ci', 'run'),
        [],
        { env: { PATH: `${dir}:/usr/bin:/bin`, HOME: dir } },
        (error, _stdout, stderr) =>
          done({
            code: error ? Number(error.code ?? 1) : 0,
            stderr,
            calls: readFileSync(log(), 'utf8').trim().split('\n').filter(Boolean),
          }),
      );
    });
  }

  it('installs with no install script, then runs the suite on both Nodes and the stress tier, when cfn-lint is the pinned version', async () => {
    const run = await ciRun(CFN_LINT_VERSION);
    expect(run.code, run.stderr).toBe(0);
    expect(run.calls.filter((call) => call.startsWith('npm '))).toEqual([
      'npm ci',
      'npm test',
      'npm run test:stress',
      'npm run test:host-node',
    ]);
  });

  it.each([
    ['missing', undefined, 'none'],
    ['another version', '1.50.0', 'cfn-lint 1.50.0'],
  ])('stops in one line, before installing anything, when cfn-lint is %s', async (_case, version, found) => {
    const run = await ciRun(version);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `ci: cfn-lint ${CFN_LINT_VERSION} is required (found: ${found}); install it on the runner image, e.g. from a hash-pinned requirements file (pip install --require-hashes)\n`,
    );
    expect(run.calls.filter((call) => !call.startsWith('cfn-lint '))).toEqual([]);
  });

  it('pip-installs nothing', () => {
    // A line that runs pip (the refusal's text may name it, as advice).
    const commands = readFileSync(join(ROOT, '.ci', 'run'), 'utf8')
      .split('\n')
      .filter((line) => !/^\s*(#|echo )/.test(line));
    expect(commands.filter((line) => /\bpip3? install\b|\bpython3? -m pip\b/.test(line))).toEqual([]);
  });
});
