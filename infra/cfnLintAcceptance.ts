/**
 * The cfn-lint findings this stack accepts, each with its reason, in one place. Each is written into
 * the template as cfn-lint's own resource-level setting (`Metadata: {"cfn-lint": {"config":
 * {"ignore_checks": [...]}}}`) on the resources of its type only, so anyone running `cfn-lint` on
 * `cdk.out` sees what the suite sees (test/infra/cfnRules.test.ts), and a new finding anywhere else
 * still fails.
 */
import { CfnResource, type IAspect, type Stack, Aspects } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

export interface AcceptedFinding {
  readonly rule: string;
  readonly resourceType: string;
  /** The property the finding is about (the setting itself ignores the rule on the whole resource). */
  readonly property: string;
  readonly reason: string;
}

export const ACCEPTED_CFN_LINT_FINDINGS: readonly AcceptedFinding[] = [
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
      "stack's tags stay on the dashboard (cost allocation).",
  },
];

/** Writes each accepted finding into the metadata of the resources it is about. */
export function acceptCfnLintFindings(stack: Stack): void {
  Aspects.of(stack).add(new CfnLintAcceptance());
}

class CfnLintAcceptance implements IAspect {
  visit(node: IConstruct): void {
    if (!(node instanceof CfnResource)) return;
    const rules = ACCEPTED_CFN_LINT_FINDINGS.filter((finding) => finding.resourceType === node.cfnResourceType).map(
      (f) => f.rule,
    );
    if (rules.length > 0) node.addMetadata('cfn-lint', { config: { ignore_checks: rules } });
  }
}
