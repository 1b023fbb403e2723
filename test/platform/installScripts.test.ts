/**
 * No dependency's install script runs, whichever npm a developer has: the project's `.npmrc` sets
 * `ignore-scripts`, which npm 10 (Node 22's own, which reads no `allowScripts`) and npm 11 (which runs
 * a script `allowScripts` does not list, with a warning) both obey. Each npm installs, offline, a tiny
 * package whose postinstall would write a marker file: into a project holding this project's `.npmrc`,
 * the marker stays absent; into one without it (the control), the script runs.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const work = mkdtempSync(join(tmpdir(), 'install-scripts-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The environment without the `npm_*` variables of the npm running the suite (its prefix, its config). */
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));

/**
 * The npms, each from the registry (the cache first) whatever npm the host has, run on this Node:
 * npm 10, Node 22's own, and npm 11.
 */
const MAJORS = ['npm 10', 'npm 11'] as const;
type Major = (typeof MAJORS)[number];
const npmCli: Partial<Record<Major, string>> = {};
const cleanRun = (command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) =>
  run(command, args, { cwd, env: { ...cleanEnv, ...env }, timeout: 60_000 });
const npm = (which: Major, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) =>
  cleanRun(process.execPath, [npmCli[which]!, ...args], cwd, env);

/** Unpacks `npm@<major>` from the registry into its own folder: its npm-cli.js. */
async function fetchNpm(which: Major): Promise<string> {
  const folder = join(work, which.replace(' ', ''));
  mkdirSync(folder);
  const spec = which.replace(' ', '@');
  const { stdout } = await cleanRun('npm', ['pack', spec, '--prefer-offline', '--json'], folder);
  const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
  await cleanRun('tar', ['xzf', filename], folder);
  return join(folder, 'package', 'bin', 'npm-cli.js');
}

/** A package whose postinstall writes the file $MARKER names, packed to a tarball. */
let tarball: string;

beforeAll(async () => {
  for (const which of MAJORS) npmCli[which] = await fetchNpm(which);
  const dependency = join(work, 'marker');
  mkdirSync(dependency);
  writeFileSync(
    join(dependency, 'package.json'),
    JSON.stringify({
      name: 'install-script-marker',
      version: '1.0.0',
      scripts: { postinstall: `node -e "require('node:fs').writeFileSync(process.env.MARKER, 'ran')"` },
    }),
  );
  await npm('npm 11', ['pack', '--ignore-scripts', '--pack-destination', work], dependency);
  tarball = join(work, readdirSync(work).find((file) => file.endsWith('.tgz'))!);
}, 120_000);

describe.each(MAJORS)('%s', (which) => {
  it('is the version named', async () => {
    const { stdout } = await npm(which, ['--version'], work);
    expect(stdout.trim().split('.')[0]).toBe(which.split(' ')[1]);
  });

  it("reads ignore-scripts=true from the project's .npmrc", async () => {
    const { stdout } = await npm(which, ['config', 'get', 'ignore-scripts'], ROOT);
    expect(stdout.trim()).toBe('true');
  });

  /**
   * Installs the marker package into a fresh project (a root and one workspace, as here), with this
   * project's .npmrc at its root or none, run in the root or the workspace; whether its script ran.
   */
  async function installScriptRan(withProjectNpmrc: boolean, folder: '.' | 'workspace'): Promise<boolean> {
    const project = mkdtempSync(join(work, `${which.replace(' ', '')}-`));
    mkdirSync(join(project, 'workspace'));
    const manifest = (name: string, more = {}) => JSON.stringify({ name, version: '1.0.0', private: true, ...more });
    writeFileSync(join(project, 'package.json'), manifest('fresh', { workspaces: ['workspace'] }));
    writeFileSync(join(project, 'workspace', 'package.json'), manifest('workspace'));
    if (withProjectNpmrc) copyFileSync(join(ROOT, '.npmrc'), join(project, '.npmrc'));
    const marker = join(project, 'marker');
    await npm(which, ['install', tarball, '--offline', '--no-audit', '--no-fund'], join(project, folder), {
      MARKER: marker,
    });
    expect(existsSync(join(project, 'node_modules', 'install-script-marker', 'package.json'))).toBe(true);
    return existsSync(marker);
  }

  it.each(['.', 'workspace'] as const)(
    "runs no install script with the project's .npmrc, run in %s",
    async (folder) => {
      expect(await installScriptRan(true, folder)).toBe(false);
    },
  );

  it('runs it without (the control: the marker package works)', async () => {
    expect(await installScriptRan(false, '.')).toBe(true);
  });
});
