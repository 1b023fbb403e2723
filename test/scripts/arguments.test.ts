/**
 * The project's CLIs answer an argument they do not take in one line that names it and the usage,
 * exit 2, and do no work first: nothing else on stdout or stderr (synthesis prints its bundling,
 * the bench and the load their progress). Run through npm as the docs write them
 * (`npm run -s <script> -- ...`). The bench's other refusals are read in-process by
 * test/tools/bench/args.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

describe('a CLI given an argument it does not take', () => {
  it.each([
    [
      'bench',
      ['--bogus'],
      /^npm run bench: Unknown option '--bogus' \(Usage: npm run bench \[-- --quick\] \[--cold-only\] \[--lambda-node-args\] \[--one-core\] \[--paired <dir>\]\)$/,
    ],
    ['synth', ['--bogus'], /^npm run synth: Unknown option '--bogus' \(Usage: npm run synth/],
    ['synth', ['cdk.out'], /^npm run synth: Unexpected argument 'cdk.out'/],
    ['load', ['--bogus'], /^npm run load: Unknown option '--bogus'/],
    ['load', ['--scenario', 'nope'], /^npm run load: unknown scenario 'nope' \(known: mixed, index-throttle\)$/],
  ])('npm run %s -- %j: one line, exit 2', (script, args, line) => {
    const run = spawnSync('npm', ['run', '-s', script, '--', ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 30_000,
    });
    const lines = run.stderr.trim().split('\n');
    expect(lines, run.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(line);
    expect(run.stdout).toBe('');
    expect(run.status).toBe(2);
  });
});
