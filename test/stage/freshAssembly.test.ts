/**
 * When the runner synthesizes again: `npx cdk ls` (which docs/deploying.md calls safe offline)
 * writes a fresh manifest and templates but no function's bundle; the runner must take that
 * assembly as stale, not stop on the first function it cannot start.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
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

/**
 * A synthesis as the CDK CLI runs one: a bundling line, then silence until the test releases it over a
 * socket (or after 10 s: a runner that blocks while it synthesizes cannot let the test release it).
 */
const SLOW_SYNTHESIS = `
import { connect } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
const [port, , outdir] = process.argv.slice(2);
process.stderr.write('Bundling asset Fake/Functions/OneFunction/Code/Stage...\\n');
const socket = connect(Number(port), '127.0.0.1');
const giveUp = setTimeout(() => socket.destroy(), 10_000);
let done = false;
const finish = () => {
  if (done) return;
  done = true;
  clearTimeout(giveUp);
  mkdirSync(outdir, { recursive: true });
  writeFileSync(outdir + '/manifest.json', '{"version":"1","artifacts":{}}');
  process.stdout.write('Successfully synthesized to ' + outdir + '\\n');
};
socket.on('data', finish).on('close', finish).on('error', finish);
`;

describe('a synthesis under way', () => {
  it('says its progress as it goes: each function bundled, and a line while the CLI is silent', async () => {
    const root = scratch();
    writeFileSync(join(root, 'synth.mjs'), SLOW_SYNTHESIS);
    const server = createServer();
    const connected = new Promise<Socket>((resolve) => server.once('connection', resolve));
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    const { port } = server.address() as AddressInfo;
    const lines: string[] = [];
    const waiting: { pattern: RegExp; resolve: () => void }[] = [];
    const seen = (pattern: RegExp) =>
      new Promise<void>((resolve) => {
        if (lines.some((line) => pattern.test(line))) resolve();
        else waiting.push({ pattern, resolve });
      });
    const report = (line: string) => {
      lines.push(line);
      for (const waiter of waiting) if (waiter.pattern.test(line)) waiter.resolve();
    };
    const app = { root, assemblySources: [], synthesize: [process.execPath, join(root, 'synth.mjs'), String(port)] };
    const synthesis = ensureCloudAssembly(join(root, 'cdk.out'), app, { report, heartbeatMs: 50 });
    const endedFirst = synthesis.then(() => {
      throw new Error(`the synthesis ended before its progress was said: ${JSON.stringify(lines)}`);
    });
    try {
      await Promise.race([seen(/^ {2}synth: bundling Fake\/Functions\/OneFunction \(\d+ s\)$/), endedFirst]);
      await Promise.race([
        seen(/^ {2}synth: \d+ s so far \(last: bundling Fake\/Functions\/OneFunction\)$/),
        endedFirst,
      ]);
      (await connected).end('go');
      await expect(synthesis).resolves.toBe('synthesized');
      expect(lines.at(-1)).toMatch(/^ {2}synth: done in \d+ s$/);
    } finally {
      endedFirst.catch(() => {});
      server.close();
    }
  }, 30_000);
});
