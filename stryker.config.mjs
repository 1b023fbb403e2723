// Mutation testing of the write path: `npm run mutation` (scripts/mutation.ts runs Stryker, then
// tools/mutation/scores.ts fails the run when any file scores below 90% or has no mutants).
// Surviving mutants judged equivalent are listed with why in docs/architecture.md ("Mutation testing").
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.stryker.config.ts' },
  coverageAnalysis: 'perTest',
  mutate: [
    'lib/store/idempotency.ts',
    'lib/domain/ids.ts',
    'lib/http/auth.ts',
    'lib/domain/pagination.ts',
    'lib/store/petWrites.ts',
    'lib/domain/apiKeys.ts',
    'lib/store/petPages.ts',
  ],
  // Stryker's break is on the overall score only; the per-file floor is tools/mutation/scores.ts.
  thresholds: { high: 90, low: 90, break: 90 },
  // json: reports/mutation/mutation.json, read by tools/mutation/scores.ts.
  reporters: ['clear-text', 'progress', 'json'],
  // Two cores: one vitest per core, as in vitest.config.ts.
  concurrency: 2,
  // Stryker rewrites the tsconfig's extends/references with TypeScript's JS API, which TypeScript 7
  // does not ship; ours has neither, so it names a file that does not exist and nothing is rewritten.
  tsconfigFile: 'stryker-has-no-tsconfig.json',
  // Copied into each sandbox otherwise; none of the mutated tests reads them.
  ignorePatterns: ['cdk.out', 'dist', '.data', 'coverage', 'test-output', 'tools/bench/results.json'],
  tempDirName: '.stryker-tmp',
};
