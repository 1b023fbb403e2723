/**
 * cdk-nag's AWS Solutions rules on both stacks, as `cdk synth` runs them (infra/app.ts registers
 * the pack). cdk-nag 3 is a CDK policy-validation plugin: findings are not annotations but
 * violations in the validation report, and a suppression is `Validations.of(x).acknowledge()`.
 */
import { Validations, type App } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PetStoreAccountStack } from '../../infra/accountStack.ts';
import type { PetStoreStack } from '../../infra/stack.ts';
import { STAGE_SETTINGS, STAGES, type Stage } from '../../infra/stages.ts';
import { testApp } from './synth.ts';

/** Every acknowledgment in the app, and why. Adding one means adding it here, on purpose. */
const EXPECTED_ACKNOWLEDGMENTS = [
  'AwsSolutions-APIG2',
  'AwsSolutions-APIG4',
  'AwsSolutions-COG4',
  'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AWSXRayDaemonWriteAccess]',
  'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
  'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
  'AwsSolutions-L1',
  'AwsSolutions-SNS2',
];

let outdir: string;
let app: App;
let stacks: Map<Stage, PetStoreStack>;
let account: PetStoreAccountStack;
let synthError: unknown;

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'petstore-nag-'));
  ({ app, stacks, account } = testApp({ outdir, nag: true }));
  try {
    app.synth();
  } catch (error) {
    synthError = error;
  }
});

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

function acknowledgments(root: IConstruct): { path: string; id: string; reason: string }[] {
  return root.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
          path: construct.node.path,
          id: id.replace(/^\w+::/, ''),
          reason,
        })),
      ),
  );
}

describe('cdk-nag AwsSolutionsChecks', () => {
  it('passes synthesis with the pack registered, as `cdk synth` does', () => {
    expect(synthError).toBeUndefined();
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
      pluginReports: { pluginName: string; violations: unknown[] }[];
    };
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
  });

  it.each(STAGES)('finds no unacknowledged error or warning in PetStore-%s', (stage) => {
    const stack = stacks.get(stage)!;
    const { violations } = new AwsSolutionsChecks().validateScope(stack);
    expect(
      violations.map(
        (v) => `${v.severity} ${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`,
      ),
    ).toEqual([]);
    // No error annotation either (cdk-nag 2 reported through these; CDK itself still does).
    expect(Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-.*'))).toEqual([]);
    expect(Annotations.fromStack(stack).findError('*', Match.anyValue())).toEqual([]);
  });

  it('finds no unacknowledged error or warning in PetStore-account', () => {
    const { violations } = new AwsSolutionsChecks().validateScope(account);
    expect(
      violations.map(
        (v) => `${v.severity} ${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`,
      ),
    ).toEqual([]);
    expect(Annotations.fromStack(account).findError('*', Match.anyValue())).toEqual([]);
  });

  it.each(STAGES)('acknowledges APIG3 (no web ACL) in PetStore-%s only where the stage has no web ACL', (stage) => {
    const apig3 = acknowledgments(stacks.get(stage)!).filter((a) => a.id === 'AwsSolutions-APIG3');
    expect(apig3.map((a) => a.path)).toEqual(
      STAGE_SETTINGS[stage].webAcl ? [] : [`PetStore-${stage}/RestApi/Api/DeploymentStage.v1`],
    );
  });

  it('acknowledges APIG3 on the API stage alone once a stage turns its web ACL off, and finds nothing else', () => {
    const { stacks: off } = testApp({ stages: ['staging'], settings: { staging: { webAcl: false } } });
    const stack = off.get('staging')!;
    const apig3 = acknowledgments(stack).filter((a) => a.id === 'AwsSolutions-APIG3');
    expect(apig3.map((a) => a.path)).toEqual(['PetStore-staging/RestApi/Api/DeploymentStage.v1']);
    expect(apig3[0]!.reason.length).toBeGreaterThanOrEqual(100);
    expect(new AwsSolutionsChecks().validateScope(stack).violations).toEqual([]);
  });

  it('still finds what it should: the checks are live, not silenced wholesale', () => {
    const { stacks: fresh } = testApp({ stages: ['staging'] });
    const stack = fresh.get('staging')!;
    // A function policy with a wildcard resource must be flagged.
    stack.functions
      .get('getPet')
      .fn.addToRolePolicy(new PolicyStatement({ actions: ['dynamodb:GetItem'], resources: ['*'] }));
    const { violations } = new AwsSolutionsChecks().validateScope(stack);
    expect(violations.map((v) => v.ruleName)).toContain('AwsSolutions-IAM5[Resource::*]');
  });

  it('acknowledges only the expected rules, each with a specific written reason', () => {
    const found = acknowledgments(app);
    expect([...new Set(found.map((a) => a.id))].sort()).toEqual([...EXPECTED_ACKNOWLEDGMENTS].sort());
    for (const { path, id, reason } of found) {
      expect(id, path).toMatch(/^AwsSolutions-/);
      expect(reason.length, `${path} ${id}`).toBeGreaterThanOrEqual(100);
    }
    // The same rule is acknowledged with the same reason everywhere.
    for (const id of EXPECTED_ACKNOWLEDGMENTS)
      expect(new Set(found.filter((a) => a.id === id).map((a) => a.reason)).size, id).toBe(1);
    // Acknowledgments sit on the constructs they concern, never on a whole stack or the app.
    for (const { path } of found) expect(path.split('/').length, path).toBeGreaterThan(1);
  });
});
