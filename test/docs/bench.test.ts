/**
 * The benchmark's documented blocks, marked `<!-- run as written by: test/docs/bench.test.ts -->`,
 * run as a newcomer runs them (shell.ts): the bench's own end-to-end proof. Long runs of many
 * processes, so in the stress tier (vitest.config.ts), which CI runs after `npm test`.
 */
import { copyFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { newcomerEnvironment, runMarkedBlocks, runToEnd } from './shell.ts';
import { ROOT, type ShellBlock } from './shellBlocks.ts';

const BENCH_TEST = 'test/docs/bench.test.ts';

const RESULTS = join(ROOT, 'tools', 'bench', 'results.json');

/**
 * Runs a bench block as written, checks it exits 0, and hands its output and the results.json it
 * wrote to `check`; the developer's own results.json is put back afterwards.
 */
async function runBench(block: ShellBlock, check: (output: string, written: unknown) => void): Promise<void> {
  const kept = `${RESULTS}.bench-test`;
  if (existsSync(RESULTS)) copyFileSync(RESULTS, kept);
  try {
    const { code, output } = await runToEnd(block.body, newcomerEnvironment());
    expect(code, output).toBe(0);
    check(output, JSON.parse(readFileSync(RESULTS, 'utf8')));
  } finally {
    if (existsSync(kept)) {
      copyFileSync(kept, RESULTS);
      rmSync(kept);
    }
  }
}

/** What this file does with each marked block, keyed by the block's first command. */
const RUNNERS: Record<string, (block: ShellBlock) => Promise<void>> = {
  // docs/performance.md: the quick benchmark (the full run is the same code with more samples).
  'npm run bench -- --quick': async (block) => {
    expect(block.commands).toEqual(['npm run bench -- --quick']);
    const started = new Date();
    await runBench(block, (output, results) => {
      expect(output).toContain('Targets (against the default floor):');
      const written = results as { date: string; quick: boolean; bundles: unknown[] };
      expect(new Date(written.date).getTime()).toBeGreaterThanOrEqual(started.getTime() - 1_000);
      expect(written.quick).toBe(true);
      expect(written.bundles.length).toBeGreaterThan(0);
    });
  },
  // docs/performance.md: the cold request with Lambda's node arguments, on one CPU.
  'npm run bench -- --quick --cold-only --lambda-node-args --one-core': async (block) => {
    expect(block.commands).toEqual(['npm run bench -- --quick --cold-only --lambda-node-args --one-core']);
    await runBench(block, (output, results) => {
      expect(output).toMatch(
        /^Timed processes: node --expose-gc --max-http-header-size 81920 --max-semi-space-size=25 --max-old-space-size=461 \(Lambda's runtime, 512 MiB\), confined to CPU \d+\.$/m,
      );
      expect(output).toContain('Cold request targets:');
      const written = results as {
        launch: { nodeArgs: string[]; cpu?: number };
        coldRequest: { rows: unknown[] };
        warm: unknown[];
      };
      expect(written.launch).toEqual({
        nodeArgs: expect.arrayContaining(['--expose-gc', '--max-semi-space-size=25']),
        cpu: expect.any(Number),
      });
      // Every row's samples passed checkLaunch; --cold-only stopped before the warm requests.
      expect(written.coldRequest.rows.length).toBeGreaterThan(0);
      expect(written.warm).toEqual([]);
    });
  },
};

runMarkedBlocks(
  BENCH_TEST,
  "the benchmark's documented blocks, run as written",
  2,
  (block) => RUNNERS[block.commands[0] ?? ''],
);
