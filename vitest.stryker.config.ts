/**
 * The tests Stryker runs against each mutant (stryker.config.mjs): the fast files that call lib/
 * and functions/ in process against the embedded dynalite. Left out: test/local (local API, the
 * deployed runner's child processes), test/infra (CDK synthesis), test/client, test/scripts and
 * test/contract, which spawn processes or synthesize and would make every mutant minutes long.
 */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/lib/**/*.test.ts', 'test/functions/**/*.test.ts'],
    // Stryker reads results from vitest itself; the CI summary line would only add noise.
    reporters: ['default'],
  },
});
