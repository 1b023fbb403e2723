/**
 * The assembly is synthesized by the app's own command when it is missing or older than the app's
 * sources, and not otherwise; a failed synthesis is one line. The app here is a folder written by the
 * test, its "synthesis" a Node script that writes an empty assembly and counts its runs.
 */
import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SynthesisError, ensureCloudAssembly, isFresh } from '../src/freshAssembly.ts';

const SYNTH = `
const { appendFileSync, mkdirSync, writeFileSync } = require('node:fs');
const out = process.argv[process.argv.indexOf('--output') + 1];
if (process.argv.includes('--fail')) { console.error('line one'); console.error('the reason'); process.exit(3); }
mkdirSync(out, { recursive: true });
writeFileSync(out + '/manifest.json', JSON.stringify({ version: '55.0.0', artifacts: {} }));
appendFileSync('runs', 'x');
`;

function fixtureApp(...extra: string[]) {
  const root = mkdtempSync(join(tmpdir(), 'stage-app-'));
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'src', 'handler.ts'), 'export const handler = async () => 1;\n');
  writeFileSync(join(root, 'synth.cjs'), SYNTH);
  const app = { root, assemblySources: ['src'], synthesize: [process.execPath, 'synth.cjs', ...extra] };
  const runs = () => readFileSync(join(root, 'runs'), 'utf8').length;
  return { app, outdir: join(root, 'cdk.out'), runs };
}

describe('ensureCloudAssembly', () => {
  it('synthesizes a missing assembly with the app command, in the app folder, and then finds it fresh', async () => {
    const { app, outdir, runs } = fixtureApp();
    expect(isFresh(outdir, app)).toBe(false);
    expect(await ensureCloudAssembly(outdir, app, { quiet: true })).toBe('synthesized');
    expect(await ensureCloudAssembly(outdir, app, { quiet: true })).toBe('fresh');
    expect(runs()).toBe(1);
  });

  it('synthesizes again once a source is newer than the manifest', async () => {
    const { app, outdir, runs } = fixtureApp();
    await ensureCloudAssembly(outdir, app, { quiet: true });
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(app.root, 'src', 'handler.ts'), later, later);
    expect(isFresh(outdir, app)).toBe(false);
    expect(await ensureCloudAssembly(outdir, app, { quiet: true })).toBe('synthesized');
    expect(runs()).toBe(2);
  });

  it('says a failed synthesis in one line: the command and the last lines it wrote', async () => {
    const { app, outdir } = fixtureApp('--fail');
    const failed = ensureCloudAssembly(outdir, app, { quiet: true });
    await expect(failed).rejects.toThrow(SynthesisError);
    await expect(failed).rejects.toThrow(/^node synth\.cjs failed: line one \/ the reason$/);
  });
});
