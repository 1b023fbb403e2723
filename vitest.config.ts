import { defineConfig } from 'vitest/config';

/**
 * The suite in tiers, each a vitest project; `npm test` runs them all (the README's test line, and
 * CI's), `npm run test:unit` the inner loop alone (`vitest run --project <tier>` any one):
 * - unit: the handlers on dynalite, lib/, the contract, the client, and the static checks of the
 *   documents and the repository (paths, sizes, imports);
 * - local: the local API over HTTP and every command-line tool, each in its own process;
 * - stage: the CDK app (synthesis, cfn-lint, cdk-nag), the stage emulator and the stages run offline as deployed;
 * - stress: the write histories and crash consistency (many processes, kills, long runs).
 */
export const TIERS = {
  unit: [
    'test/functions/**',
    'test/lib/**',
    'test/contract/**',
    'test/client/**',
    'test/docs/commands.test.ts',
    'test/docs/frontDoor.test.ts',
    'test/repository/**',
    'test/platform/**',
    'test/tools/mutation/**',
  ],
  local: ['test/local/**', 'test/tools/**', 'test/scripts/**', 'test/ci/**'],
  stage: ['test/infra/**', 'test/stage/**', 'tools/stage-emulator/test/**', 'test/docs/walkthrough.test.ts'],
  stress: ['test/local/writeHistory.test.ts', 'test/local/crashConsistency.test.ts', 'test/stage/writeHistory.test.ts'],
} as const;

/** Files of a tier that belong to a later one: they need a stage running, or are stress runs. */
const MOVED_ON: Partial<Record<keyof typeof TIERS, readonly string[]>> = {
  unit: ['test/contract/contentEncoding.test.ts'],
  local: [...TIERS.stress, 'test/local/parity.test.ts', 'test/tools/mutation/**'],
  stage: [...TIERS.stress],
};
const LATER: Partial<Record<keyof typeof TIERS, readonly string[]>> = {
  stage: ['test/contract/contentEncoding.test.ts', 'test/local/parity.test.ts'],
};

const tier = (name: keyof typeof TIERS) => ({
  extends: true as const,
  test: {
    name,
    include: [...TIERS[name], ...(LATER[name] ?? [])].map((glob) =>
      glob.endsWith('/**') ? `${glob}/*.test.ts` : glob,
    ),
    exclude: [...(MOVED_ON[name] ?? [])],
  },
});

export default defineConfig({
  test: {
    projects: [tier('unit'), tier('local'), tier('stage'), tier('stress')],
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
