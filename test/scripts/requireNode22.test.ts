/**
 * An entry point started on a Node older than 22 (outside npm, or where `npm ci` brought no Node 22)
 * stops in one line on stderr saying what to do, exit 1, no stack: local/requireNode22.mjs, which
 * the npm scripts preload and local/server.ts and every scripts/*.ts import first. Run on the host's
 * own older Node (the one that launched npm), as a developer would start them:
 * `node --import tsx <file>` and `tsx <file>`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const ENTRY_POINTS = ['local/server.ts', ...readdirSync(join(ROOT, 'scripts')).map((file) => `scripts/${file}`)];

const major = (node: string) => Number(execFileSync(node, ['-p', 'process.versions.node']).toString().split('.')[0]);

/** A Node older than 22 on this machine: the one that launched npm, else the first on PATH outside node_modules. */
function olderNode(): string | undefined {
  const onPath = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((folder) => folder !== '' && !folder.includes('node_modules'))
    .map((folder) => join(folder, 'node'));
  return [process.env.npm_node_execpath, ...onPath].find(
    (node): node is string => node !== undefined && existsSync(node) && major(node) < 22,
  );
}

const OLDER_NODE = olderNode();
const work = mkdtempSync(join(tmpdir(), 'require-node22-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A preload that makes the process report another cpu, for the platforms this machine is not. */
function pretendingCpu(cpu: string): string[] {
  const preload = join(work, `${cpu}.mjs`);
  writeFileSync(preload, `Object.defineProperty(process, 'arch', { value: ${JSON.stringify(cpu)} });\n`);
  return ['--import', preload];
}

function started(args: string[]) {
  const run = spawnSync(OLDER_NODE!, args, { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  return { code: run.status, stdout: run.stdout, lines: run.stderr.split('\n').filter((line) => line !== '') };
}

/** A cpu of this os that package-lock.json has a Node package for, and that is not this machine's. */
function otherShippedCpu(): string | undefined {
  const { packages } = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { optional?: boolean; os?: string; cpu?: string; bin?: Record<string, string> }>;
  };
  return Object.values(packages).find(
    (entry) => entry.optional && entry.bin?.node && entry.os === process.platform && entry.cpu !== process.arch,
  )?.cpu;
}

describe('every entry point', () => {
  it.each(ENTRY_POINTS)('%s imports the guard before anything else', (file) => {
    const firstImport = /^import .*$/m.exec(readFileSync(join(ROOT, file), 'utf8'))?.[0];
    expect(firstImport).toBe(`import '${file.startsWith('local/') ? '.' : '../local'}/requireNode22.mjs';`);
  });

  it('is preloaded by its npm script before tsx, which needs the optional packages too (esbuild)', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const starting = Object.entries(scripts).filter(([, line]) => /(^|\s)tsx\s|--import tsx/.test(line));
    expect(starting.map(([name]) => name)).toContain('start');
    for (const [name, line] of starting) {
      expect(line, name).toMatch(
        /^(exec node|tsx) --import \.\/local\/requireNode22\.mjs (--import tsx )?(local|scripts)\//,
      );
    }
    expect(scripts.test).toMatch(/^node local\/requireNode22\.mjs && /);
  });
});

describe.skipIf(OLDER_NODE === undefined)(
  `an entry point on the host's Node ${OLDER_NODE ?? '(none older than 22 here)'}`,
  () => {
    const version = () => execFileSync(OLDER_NODE!, ['--version']).toString().trim();

    it('started as node --import tsx local/server.ts: one line naming Node 22 and how to start it, exit 1', () => {
      const run = started(['--import', 'tsx', 'local/server.ts']);
      expect(run.lines).toEqual([
        `Node 22 is needed (this is ${version()}) to run local/server.ts: start it through npm (npm start, npm run <script>), which runs it on node_modules/.bin/node, or as node_modules/.bin/node --import tsx local/server.ts`,
      ]);
      expect([run.code, run.stdout]).toEqual([1, '']);
    });

    it('started as tsx scripts/keys.ts: the same line for that script, exit 1', () => {
      const run = started([join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'scripts/keys.ts', 'list']);
      expect(run.lines).toHaveLength(1);
      expect(run.lines[0]).toMatch(/^Node 22 is needed \(this is v\d+\.\d+\.\d+\) to run scripts\/keys\.ts: /);
      expect([run.code, run.stdout]).toEqual([1, '']);
    });

    it('on a platform no package ships Node for: one line saying to install Node 22, exit 1', () => {
      const run = started([...pretendingCpu('ppc64'), '--import', 'tsx', 'scripts/dev.ts']);
      const platform = `${process.platform}-ppc64`;
      expect(run.lines).toEqual([
        `Node 22 is needed (this is ${version()}) and no node-${platform} package exists for ${platform}: install Node 22 (nvm install, see .nvmrc) and run npm again`,
      ]);
      expect([run.code, run.stdout]).toEqual([1, '']);
    });

    it('where npm installed the package but did not link node_modules/.bin/node (npm 10): one line saying to use npm 11, exit 1', () => {
      // A copy of what the guard reads: the lock, this platform's installed package, no .bin link.
      const copy = join(work, 'unlinked');
      const shipped = readdirSync(join(ROOT, 'node_modules')).find(
        (name) => existsSync(join(ROOT, 'node_modules', name, 'bin', 'node')) && name.startsWith('node-'),
      )!;
      for (const folder of ['local', 'scripts', `node_modules/${shipped}`])
        mkdirSync(join(copy, folder), { recursive: true });
      for (const file of ['local/requireNode22.mjs', 'package-lock.json', `node_modules/${shipped}/package.json`])
        copyFileSync(join(ROOT, file), join(copy, file));
      writeFileSync(join(copy, 'scripts', 'entry.mjs'), "import '../local/requireNode22.mjs';\n");
      const run = spawnSync(OLDER_NODE!, ['scripts/entry.mjs'], { cwd: copy, encoding: 'utf8', timeout: 30_000 });
      expect(run.stderr.split('\n').filter(Boolean)).toEqual([
        `Node 22 is needed (this is ${version()}) and npm did not link ${shipped} as node_modules/.bin/node (npm 10 does not; npm 11 does): run npm install -g npm@11 and npm ci again, or install Node 22 (nvm install, see .nvmrc)`,
      ]);
      expect([run.status, run.stdout]).toEqual([1, '']);
    });

    const cpu = otherShippedCpu();
    it.skipIf(cpu === undefined)(
      `where the platform's package was not installed (${process.platform}-${cpu}): one line, exit 1`,
      () => {
        const run = started([...pretendingCpu(cpu!), '--import', 'tsx', 'scripts/startDeployed.ts']);
        expect(run.lines).toHaveLength(1);
        expect(run.lines[0]).toMatch(
          new RegExp(
            `^Node 22 is needed .* and node-\\S*${process.platform}-${cpu}, its package for ${process.platform}-${cpu}, is not installed .*: run npm ci, or install Node 22 \\(nvm install, see \\.nvmrc\\)$`,
          ),
        );
        expect([run.code, run.stdout]).toEqual([1, '']);
      },
    );
  },
);
