/**
 * The deployers' policies, one per stage (infra/policies/deployer-<stage>.json, which docs/deploying.md
 * sends deployers to), evaluated with IAM's own rules (@cloud-copilot/iam-simulate) against what a
 * deployer does: the deploy's own calls and every AWS command of docs/deploying.md and
 * docs/operating.md, on the resources of the synthesized stage stack named as CloudFormation names
 * them. Each must allow its stage's calls, refuse the other stage's, and refuse what is an administrator's.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/bundle/bundling.ts';
import { BOOTSTRAP_QUALIFIERS } from '../../infra/names.ts';
import { STAGES, stackName, type Stage } from '../../infra/stages.ts';
import { ACCOUNT, REGION, expectAll, policyFile, type Call, type Principal } from './iamSimulation.ts';
import { props, synthesizedStages } from './templates.ts';

const of = synthesizedStages();
const deployer = (stage: Stage): Principal => ({ identity: [policyFile(`deployer-${stage}.json`)] });
const other = (stage: Stage): Stage => STAGES.find((s) => s !== stage)!;
const stackId = (stage: Stage) =>
  `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${stackName(stage)}/0f5a8e10-cd6b-11ee-8a32-0a1b2c3d4e5f`;

/** A resource's name as CloudFormation generates it: `<stack>-<logical id>-<random suffix>`. */
const generatedName = (stage: Stage, logicalId: string) => `${stackName(stage)}-${logicalId}-AB12CD34EF56`;

/** A stage stack's resources a deployer acts on, by CloudFormation's names. */
function stageResources(stage: Stage) {
  const resources = Object.entries(of(stage).json.Resources);
  const ofType = (type: string) => resources.filter(([, r]) => r.Type === type);
  const application = ofType('AWS::CodeDeploy::Application')[0]?.[0];
  const groups = ofType('AWS::CodeDeploy::DeploymentGroup').map(
    ([id]) =>
      `arn:aws:codedeploy:${REGION}:${ACCOUNT}:deploymentgroup:${generatedName(stage, application!)}/${generatedName(stage, id)}`,
  );
  const aliased = ofType('AWS::Lambda::Alias').map(([, alias]) => (props(alias).FunctionName as { Ref: string }).Ref);
  const [topicId] = ofType('AWS::SNS::Topic')[0]!;
  const api5xx = ofType('AWS::CloudWatch::Alarm')
    .map(([, a]) => String(props(a).AlarmName))
    .find((name) => name.endsWith('-Api5xxRate'))!;
  return {
    groups,
    functions: aliased.map((id) => `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${generatedName(stage, id)}`),
    topic: `arn:aws:sns:${REGION}:${ACCOUNT}:${generatedName(stage, topicId)}`,
    api5xxAlarm: `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:${api5xx}`,
  };
}

/** What each AWS CLI command of the runbook calls on `stage`'s stack, or whose it is if not a deployer's. */
function runbookCalls(command: string, stage: Stage): Call[] | 'administrator' | 'none' {
  const r = stageResources(stage);
  const onStack = (action: string) => [{ action, resource: stackId(stage) }];
  const table: Record<string, Call[] | 'administrator' | 'none'> = {
    'sts get-caller-identity': 'none',
    'configure get': 'none',
    'cloudformation describe-stacks': onStack('cloudformation:DescribeStacks'),
    'cloudformation describe-stack-events': onStack('cloudformation:DescribeStackEvents'),
    'cloudformation wait': onStack('cloudformation:DescribeStacks'),
    'cloudformation update-termination-protection': onStack('cloudformation:UpdateTerminationProtection'),
    'cloudformation delete-stack': onStack('cloudformation:DeleteStack'),
    'sns list-subscriptions-by-topic': [{ action: 'sns:ListSubscriptionsByTopic', resource: r.topic }],
    // Canaries and their rollback, and reserved concurrency: production's alone (staging has none).
    'deploy list-deployments': r.groups.map((resource) => ({ action: 'codedeploy:ListDeployments', resource })),
    'deploy get-deployment': r.groups.map((resource) => ({ action: 'codedeploy:GetDeployment', resource })),
    'cloudwatch set-alarm-state':
      stage === 'production' ? [{ action: 'cloudwatch:SetAlarmState', resource: r.api5xxAlarm }] : [],
    'lambda list-versions-by-function':
      stage === 'production'
        ? r.functions.map((resource) => ({ action: 'lambda:ListVersionsByFunction', resource }))
        : [],
    'lambda update-alias':
      stage === 'production' ? r.functions.map((resource) => ({ action: 'lambda:UpdateAlias', resource })) : [],
    'lambda get-account-settings':
      stage === 'production' ? [{ action: 'lambda:GetAccountSettings', resource: '*' }] : [],
    'iam create-policy': 'administrator',
    // An operator's check of a filter pattern on a log line: no resource, not the deployer's.
    'logs test-metric-filter': 'administrator',
    // Lists every function of the account: no resource narrows it, so it is not the deployer's.
    'lambda list-functions': 'administrator',
    'dynamodb create-backup': 'administrator',
    'dynamodb update-table': 'administrator',
    'dynamodb delete-table': 'administrator',
    'logs describe-log-groups': 'administrator',
    'logs delete-log-group': 'administrator',
    'service-quotas request-service-quota-increase': 'administrator',
    // AWS Backup's account setting, and reading the vault's recovery points: an administrator's (docs/deploying.md "Backups").
    'backup update-region-settings': 'administrator',
    'backup list-recovery-points-by-backup-vault': 'administrator',
    // Removing PetStore-account for good (docs/deploying.md "Tear down"): the account stack is an administrator's.
    'cloudformation describe-stack-resources': 'administrator',
    'apigateway update-account': 'administrator',
    'iam detach-role-policy': 'administrator',
    'iam delete-role': 'administrator',
  };
  const calls = table[command];
  if (!calls)
    throw new Error(
      `the runbook runs "aws ${command}": say in test/infra/deployerPolicy.test.ts what it calls, and whose it is`,
    );
  return calls;
}

const runbookCommands = [
  ...new Set(
    ['deploying.md', 'operating.md'].flatMap((doc) =>
      [...readFileSync(join(PROJECT_ROOT, 'docs', doc), 'utf8').matchAll(/```sh\n([\s\S]*?)```/g)].flatMap(
        ([, block]) =>
          [...block!.replace(/#.*$/gm, '').matchAll(/\baws ([a-z0-9-]+) ([a-z0-9-]+)/g)].map(
            ([, service, command]) => `${service} ${command}`,
          ),
      ),
    ),
  ),
];
const deployersCalls = (stage: Stage) =>
  runbookCommands.flatMap((command) => {
    const calls = runbookCalls(command, stage);
    return Array.isArray(calls) ? calls : [];
  });

describe.each(STAGES)('infra/policies/deployer-%s.json', (stage) => {
  const policy = deployer(stage).identity[0]!;

  it('grants no action pattern, and nothing on "*" but lambda:GetAccountSettings, which takes no resource', () => {
    for (const statement of policy.Statement) {
      expect(
        [statement.Action].flat().every((action) => !action.includes('*')),
        statement.Sid,
      ).toBe(true);
      if ([statement.Resource].flat().includes('*'))
        expect(statement.Action, statement.Sid).toEqual('lambda:GetAccountSettings');
    }
    expect(policy.Statement.flatMap((statement) => [statement.Action].flat())).not.toContain(
      'codedeploy:StopDeployment',
    );
  });

  it("allows its stage's bootstrap roles only: not the other stage's, nor the account stack's", async () => {
    const bootstrapRole = (qualifier: string, role: string) =>
      `arn:aws:iam::${ACCOUNT}:role/cdk-${qualifier}-${role}-role-${ACCOUNT}-${REGION}`;
    const roles = ['deploy', 'file-publishing', 'image-publishing', 'lookup'];
    await expectAll(
      deployer(stage),
      roles.map((role) => ({ action: 'sts:AssumeRole', resource: bootstrapRole(BOOTSTRAP_QUALIFIERS[stage], role) })),
      'Allowed',
    );
    await expectAll(
      deployer(stage),
      [
        ...roles.map((role) => ({
          action: 'sts:AssumeRole',
          resource: bootstrapRole(BOOTSTRAP_QUALIFIERS[other(stage)], role),
        })),
        { action: 'sts:AssumeRole', resource: bootstrapRole(BOOTSTRAP_QUALIFIERS.account, 'deploy') },
        { action: 'sts:AssumeRole', resource: bootstrapRole('hnb659fds', 'deploy') },
        { action: 'sts:AssumeRole', resource: `arn:aws:iam::${ACCOUNT}:role/OrganizationAccountAccessRole` },
      ],
      'Denied',
    );
  });

  it("allows every runbook command on its stage's own resources, and none of them on the other stage's", async () => {
    expect(runbookCommands).toEqual(
      expect.arrayContaining(['deploy list-deployments', 'lambda update-alias', 'cloudformation delete-stack']),
    );
    await expectAll(deployer(stage), deployersCalls(stage), 'Allowed');
    await expectAll(deployer(stage), deployersCalls(other(stage)), 'Denied');
  });

  it("refuses what is an administrator's: users, policies, tables, log groups, another service's stack", async () => {
    const admin = runbookCommands.filter((command) => runbookCalls(command, stage) === 'administrator');
    expect(admin).toEqual(expect.arrayContaining(['dynamodb delete-table', 'logs delete-log-group']));
    await expectAll(
      deployer(stage),
      [
        { action: 'iam:CreateUser', resource: `arn:aws:iam::${ACCOUNT}:user/intruder` },
        { action: 'iam:CreatePolicy', resource: `arn:aws:iam::${ACCOUNT}:policy/petstore-deployer` },
        {
          action: 'dynamodb:DeleteTable',
          resource: `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${generatedName(stage, 'ControlTableF3E1E223')}`,
        },
        {
          action: 'logs:DeleteLogGroup',
          resource: `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${generatedName(stage, 'ListPetsLogs912AF886')}`,
        },
        {
          action: 'cloudformation:DeleteStack',
          resource: `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/OtherService/0f5a8e10-cd6b-11ee-8a32-0a1b2c3d4e5f`,
        },
        { action: 'lambda:UpdateAlias', resource: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:OtherService-api` },
        { action: 'cloudwatch:SetAlarmState', resource: `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:billing` },
        { action: 'codedeploy:StopDeployment', resource: '*' },
        { action: 'apigateway:POST', resource: `arn:aws:apigateway:${REGION}::/apikeys` },
      ],
      'Denied',
    );
  });
});
