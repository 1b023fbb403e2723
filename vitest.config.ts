import { defineConfig } from 'vitest/config';

/**
 * The suite in tiers, each a vitest project (`npx vitest run --project <tier>` runs one):
 * - unit: the handlers on dynalite, lib/, the contract, the client, and the static checks of the
 *   documents and the repository (paths, the Node 22 packages per platform); `npm run test:unit`, the inner loop;
 * - local: the local API over HTTP and every command-line tool, each in its own process;
 * - infra: the CDK app through Template.fromStack, cfn-lint, cdk-nag and IAM's rules;
 * - stage: the stage emulator and the stages run offline as deployed, the README's walkthrough;
 * - stress: the write histories, crash consistency and the benchmark's documented runs (many
 *   processes, kills, long runs).
 * `npm test` (the README's test line) runs unit, local, infra and stage; `npm run test:stress` the
 * stress tier, which CI runs after it (.ci/run).
 */

/** The stress runs, in the folders of the tiers they would otherwise fall in (or in none). */
const STRESS = [
  'test/local/writeHistory.test.ts',
  'test/local/crashConsistency.test.ts',
  'test/local/faultWindow.test.ts',
  'test/stage/writeHistory.test.ts',
  'test/stage/rehearsal.test.ts',
  'test/stage/rehearsalVerdict.test.ts',
  'test/docs/bench.test.ts',
];
/** Files of the client and the platform that run the local API over HTTP or npm in its own process. */
const OWN_PROCESSES = [
  'test/client/retries.test.ts',
  'test/client/package.test.ts',
  'test/platform/nodeBinaries.test.ts',
  'test/platform/installScripts.test.ts',
];
/** The emulator's alarm evaluator on metric stores the tests fill: no stage, so the unit tier. */
const ALARM_EVALUATOR = 'tools/stage-emulator/test/alarms/**/*.test.ts';
/** Files in the unit or local folders that need a stage running. */
const NEEDS_STAGE = ['test/contract/contentEncoding.test.ts', 'test/local/parity.test.ts'];

export const TIERS = {
  unit: {
    include: [
      'test/functions/**/*.test.ts',
      'test/lib/**/*.test.ts',
      'test/contract/**/*.test.ts',
      'test/client/**/*.test.ts',
      'test/docs/commands.test.ts',
      'test/docs/frontDoor.test.ts',
      'test/repository/**/*.test.ts',
      'test/tools/mutation/**/*.test.ts',
      ALARM_EVALUATOR,
    ],
    exclude: [...NEEDS_STAGE, ...OWN_PROCESSES],
  },
  local: {
    include: [
      'test/local/**/*.test.ts',
      'test/tools/**/*.test.ts',
      'test/scripts/**/*.test.ts',
      'test/ci/**/*.test.ts',
      ...OWN_PROCESSES,
    ],
    exclude: [...STRESS, ...NEEDS_STAGE, 'test/tools/mutation/**'],
  },
  infra: { include: ['test/infra/**/*.test.ts'], exclude: [] },
  stage: {
    include: [
      'test/stage/**/*.test.ts',
      'tools/stage-emulator/test/**/*.test.ts',
      'test/docs/walkthrough.test.ts',
      ...NEEDS_STAGE,
    ],
    exclude: [...STRESS, ALARM_EVALUATOR],
  },
  stress: { include: STRESS, exclude: [] },
} as const;

/**
 * The infra tier's files share their modules within a worker (`isolate: false`): aws-cdk-lib is
 * imported, and the default app synthesized (test/infra/templates.ts), once per worker, not once
 * per file. None of them mocks a module, stubs a global or changes the environment, and none runs
 * a server or a watch that another file could meet.
 */
const SHARES_MODULES: readonly (keyof typeof TIERS)[] = ['infra'];

const tier = (name: keyof typeof TIERS) => ({
  extends: true as const,
  test: {
    name,
    include: [...TIERS[name].include],
    exclude: [...TIERS[name].exclude],
    ...(SHARES_MODULES.includes(name) ? { isolate: false } : {}),
  },
});

export default defineConfig({
  test: {
    projects: [tier('unit'), tier('local'), tier('infra'), tier('stage'), tier('stress')],
    // Mutes the one-line-per-request log (lib/http/requestLog.ts); test/functions/requestLog.test.ts reads it.
    setupFiles: ['test/support/muteRequestLog.ts'],
    // One temporary folder per run, removed at its end (test/support/tempRoot.ts).
    globalSetup: ['test/support/tempRoot.ts'],
    // Two cores: files run in parallel on forks, each with its own embedded dynalite.
    pool: 'forks',
    // Two workers on two cores: vitest's default is one fewer than the cores. Most files wait on
    // child processes, sockets and dynalite rather than compute.
    maxWorkers: 2,
    // Node 20 (the host's run) has WebSocket behind a flag; the --inspect test speaks the inspector
    // protocol over it. Node 22 has it on.
    execArgv: Number(process.versions.node.split('.')[0]) < 22 ? ['--experimental-websocket'] : [],
    reporters: ['default', './test/support/summaryReporter.ts'],
    testTimeout: 60_000,
    // Logs of passing tests (expected 401s, injected faults) are noise; a failing test shows its own.
    silent: 'passed-only',
    hookTimeout: 120_000,
  },
});
