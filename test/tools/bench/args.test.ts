/**
 * What `npm run bench` is asked to do (tools/bench/args.ts): `--paired <dir>` finds another build of
 * every function there, or refuses before any work. The one-line answers to a mistake, through npm,
 * are test/scripts/arguments.test.ts's.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../../lib/domain/routes.ts';
import { BenchUsageError, benchSettings } from '../../../tools/bench/args.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-paired-'));
  // As `npm run build` writes them (index.js), one as an older ES module build would be (index.mjs).
  routes.forEach(({ operation }, i) => {
    mkdirSync(join(dir, operation));
    writeFileSync(join(dir, operation, i === 0 ? 'index.mjs' : 'index.js'), '');
  });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('--paired <dir>', () => {
  it("takes each function's other build from its folder, index.js or index.mjs", () => {
    const { paired } = benchSettings(['--paired', dir]);
    expect(paired?.dir).toBe(dir);
    expect([...paired!.files]).toEqual(
      routes.map(({ operation }, i) => [operation, join(dir, operation, i === 0 ? 'index.mjs' : 'index.js')]),
    );
  });

  it('refuses a folder that lacks one, naming it', () => {
    const [first] = routes;
    rmSync(join(dir, first!.operation), { recursive: true });
    expect(() => benchSettings(['--paired', dir])).toThrow(BenchUsageError);
    expect(() => benchSettings(['--paired', dir])).toThrow(`no ${first!.operation}/index.js (or index.mjs) there`);
  });

  it('is optional: without it nothing is paired', () => {
    expect(benchSettings(['--quick']).paired).toBeUndefined();
  });
});

// Read as the bench reads its arguments; one such refusal through npm (one line, exit 2, no work
// first) is test/scripts/arguments.test.ts's.
describe('an argument the bench does not take', () => {
  it.each([
    [
      ['--paired', 'no-such-folder'],
      /^--paired no-such-folder: no \w+\/index\.js \(or index\.mjs\) there; write one with npm run build/,
    ],
    [['--paired'], /^Option '--paired <value>' argument missing/],
    [['extra'], /^Unexpected argument 'extra'.*Usage: npm run bench/],
    [['--quick=yes'], /^Option '--quick' does not take an argument/],
  ])('%j: a BenchUsageError saying so', (argv, says) => {
    expect(() => benchSettings(argv)).toThrow(BenchUsageError);
    expect(() => benchSettings(argv)).toThrow(says);
  });
});
