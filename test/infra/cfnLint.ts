/**
 * cfn-lint (AWS's CloudFormation linter, Python) on synthesized templates. The findings we accept
 * are listed here, and only here, each with its reason and held to the resource type and property
 * it is about, so a new finding of the same rule elsewhere still fails.
 */
import { execFileSync, spawnSync } from 'node:child_process';

export interface CfnLintFinding {
  Filename: string;
  Level: 'Error' | 'Warning' | 'Informational';
  Message: string;
  Rule: { Id: string };
  Location: { Path: readonly (string | number)[] };
}

export interface AcceptedFinding {
  rule: string;
  resourceType: string;
  /** The property path below the resource's Properties, e.g. `Tags`. */
  property: string;
  reason: string;
}

export const ACCEPTED_FINDINGS: readonly AcceptedFinding[] = [
  {
    rule: 'E3002',
    resourceType: 'AWS::CloudWatch::Dashboard',
    property: 'Tags',
    reason:
      "cfn-lint 1.51.0's resource schema for AWS::CloudWatch::Dashboard still says `taggable: false` with only " +
      'DashboardBody and DashboardName. CloudWatch added tags on dashboards in June 2026 ("Amazon CloudWatch now ' +
      'supports tags on dashboards"), the CloudFormation registry schema that aws-cdk-lib 2.276 generates ' +
      'CfnDashboard from carries Tags (CfnDashboard implements ITaggableV2; aws-cdk issue 37975), and ' +
      'cloud-custodian tags dashboards through the CloudWatch API since September 2026. The linter lags; the ' +
      'stack tags stay on the dashboard (cost allocation). See infra/constructs/monitoring.ts.',
  },
];

export const CFN_LINT_INSTALL_HINT = 'cfn-lint is not installed: `pip install cfn-lint==1.51.0` (Python 3), then run the tests again.';

export function cfnLintVersion(): string | undefined {
  const result = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

/** Every finding of cfn-lint on the template files (JSON format; its exit code says only that there were some). */
export function runCfnLint(files: readonly string[]): CfnLintFinding[] {
  let output: string;
  try {
    output = execFileSync('cfn-lint', ['--format', 'json', ...files], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    output = String((error as { stdout?: string }).stdout ?? '');
    if (!output.trim().startsWith('[')) throw error;
  }
  return JSON.parse(output) as CfnLintFinding[];
}

/** The accepted entry a finding falls under, if any. */
export function acceptedBy(
  finding: CfnLintFinding,
  resources: Record<string, { Type: string }>,
): AcceptedFinding | undefined {
  const [section, logicalId, properties, property] = finding.Location.Path;
  if (section !== 'Resources' || properties !== 'Properties') return undefined;
  const type = resources[String(logicalId)]?.Type;
  return ACCEPTED_FINDINGS.find(
    (accepted) => accepted.rule === finding.Rule.Id && accepted.resourceType === type && accepted.property === property,
  );
}
