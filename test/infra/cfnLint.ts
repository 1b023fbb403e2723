/**
 * cfn-lint (AWS's CloudFormation linter, Python) on synthesized templates. The findings the stack
 * accepts are listed, with their reasons, in infra/cfnLintAcceptance.ts, which writes them into the
 * template as cfn-lint's own resource-level setting: a plain `cfn-lint cdk.out/*.template.json` and
 * these tests see the same.
 */
import { execFileSync, spawnSync } from 'node:child_process';

export interface CfnLintFinding {
  Filename: string;
  Level: 'Error' | 'Warning' | 'Informational';
  Message: string;
  Rule: { Id: string };
  Location: { Path: readonly (string | number)[] };
}

/** The cfn-lint the templates are judged by; .ci/run requires exactly this one (test/ci/run.test.ts). */
export const CFN_LINT_VERSION = '1.51.0';
export const CFN_LINT_INSTALL_HINT = `cfn-lint is not installed: \`pip install cfn-lint==${CFN_LINT_VERSION}\` (Python 3), then run the tests again.`;

export function cfnLintVersion(): string | undefined {
  const result = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

/** Every finding of cfn-lint on the template files (JSON format; its exit code says only that there were some). */
export function runCfnLint(files: readonly string[]): CfnLintFinding[] {
  let output: string;
  try {
    output = execFileSync('cfn-lint', ['--format', 'json', ...files], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    output = String((error as { stdout?: string }).stdout ?? '');
    if (!output.trim().startsWith('[')) throw error;
  }
  return JSON.parse(output) as CfnLintFinding[];
}
