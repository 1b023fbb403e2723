/**
 * API Gateway's account setting (`AWS::ApiGateway::Account`, the CloudWatch role every stage's
 * execution logs go through) is one per account and Region: the account stack owns it
 * (infra/accountStack.ts), neither stage stack does, and each stage stack depends on it, so a
 * staging deploy or destroy cannot change what production uses.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_STACK_NAME } from '../../infra/names.ts';
import { STAGES } from '../../infra/stages.ts';
import { testApp } from './synth.ts';
import { synthesizedStages } from './templates.ts';

const of = synthesizedStages();

describe('the account stack', () => {
  const { account, stacks } = testApp();
  const template = Template.fromStack(account);

  it("alone sets API Gateway's account setting, to a role only API Gateway assumes, with AWS's push-to-logs policy; both retained", () => {
    expect(account.stackName).toBe(ACCOUNT_STACK_NAME);
    const accounts = template.findResources('AWS::ApiGateway::Account');
    const roles = template.findResources('AWS::IAM::Role');
    expect(Object.keys(accounts)).toHaveLength(1);
    expect(Object.keys(roles)).toHaveLength(1);
    const [roleId, role] = Object.entries(roles)[0]!;
    expect(Object.values(accounts)[0]).toMatchObject({
      Properties: { CloudWatchRoleArn: { 'Fn::GetAtt': [roleId, 'Arn'] } },
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
    expect(role).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'apigateway.amazonaws.com' } },
    ]);
    expect(JSON.stringify(role.Properties.ManagedPolicyArns)).toContain(
      'service-role/AmazonAPIGatewayPushToCloudWatchLogs',
    );
  });

  it('is what every stage stack depends on, so deploying a stage deploys it first', () => {
    for (const stage of STAGES)
      expect(
        stacks.get(stage)!.dependencies.map((stack) => stack.stackName),
        stage,
      ).toEqual([ACCOUNT_STACK_NAME]);
  });

  it.each(STAGES)('leaves PetStore-%s without any account setting or role API Gateway could assume', (stage) => {
    const s = of(stage);
    expect(s.ofType('AWS::ApiGateway::Account')).toEqual([]);
    for (const [id, role] of s.ofType('AWS::IAM::Role')) {
      expect(JSON.stringify(role.Properties?.AssumeRolePolicyDocument), id).not.toContain('apigateway.amazonaws.com');
    }
    // Execution logging still on: it goes through the account stack's role.
    const [, apiStage] = s.ofType('AWS::ApiGateway::Stage')[0]!;
    expect(JSON.stringify(apiStage.Properties)).toContain('"LoggingLevel":"ERROR"');
  });
});
