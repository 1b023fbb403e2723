/** A project command run as a newcomer runs it: its own Node process, configured by flags and environment. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';
import { PROJECT_ROOT } from '../../infra/bundle/bundling.ts';

/**
 * The project's Node 22 (the platform's optional dependency), whichever Node runs the suite: the one
 * `npm start` runs on. (The host's Node 20 adds the AWS SDK's support warning to stderr.)
 */
export const PROJECT_NODE = join(PROJECT_ROOT, 'node_modules', '.bin', 'node');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Variables of the test's own environment a command must not inherit (they would choose its store or keys). */
const CONFIGURATION = [
  'PORT',
  'DYNAMODB_ENDPOINT',
  'PETSTORE_API_KEYS',
  'PETSTORE_API_KEY',
  'PETSTORE_CURSOR_SECRET',
  'PETSTORE_DATA_DIR',
  'PETSTORE_IN_MEMORY',
  'PETSTORE_KEEP_DAMAGED_STORE',
];

/** A command's environment: `env` over the test's own minus CONFIGURATION. */
export function commandEnvironment(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const inherited: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CONFIGURATION) delete inherited[name];
  return { ...inherited, ...env };
}

/** `node --import tsx <script> ...args` on PROJECT_NODE, with commandEnvironment(env); killed after `timeoutMs`. */
export function runCli(
  script: string,
  args: readonly string[] = [],
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      PROJECT_NODE,
      ['--import', 'tsx', script, ...args],
      { timeout: timeoutMs, env: commandEnvironment(env) },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A refusal as the project writes one: a non-zero exit and stderr of one line, without a stack frame. */
export function expectOneLineRefusal(run: CliRun, says: RegExp | string): void {
  const lines = run.stderr.trimEnd().split('\n');
  expect(run.stderr).not.toMatch(/^\s+at /m);
  expect(lines, run.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(says);
  expect(run.code).not.toBe(0);
}
