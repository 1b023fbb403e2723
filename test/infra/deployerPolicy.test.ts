/**
 * The deployer's policy (infra/deployer-policy.json, which docs/deploying.md sends deployers to),
 * evaluated with IAM's own rules (@cloud-copilot/iam-simulate) against what a deployer does: every
 * call `npm run keys` makes (create, list, rotate, revoke, recorded as they are sent: DynamoDB on
 * dynalite, API Gateway's control plane on a loopback stand-in), the deploy's own calls, and every
 * AWS command of docs/deploying.md and docs/operating.md, on the resources of the synthesized
 * production stack named as CloudFormation names them. It must allow each, refuse what is an
 * administrator's, and refuse the same calls on anything but the stacks' own resources.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSimulation } from '@cloud-copilot/iam-simulate';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/bundle/bundling.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { ensureControlTable } from '../../local/embeddedStore.ts';
import { API_KEY_FORMAT, runKeys, type StackOutputsReader } from '../../tools/keys/keys.ts';
import { apiGatewayUsagePlanKeys } from '../../tools/keys/usagePlanKeys.ts';
import { keyIn } from '../support/keys.ts';
import { useEmbeddedStore } from '../support/store.ts';
import { props, synthesizedStages } from './templates.ts';

const ACCOUNT = '123456789012';
const REGION = 'us-east-1';
const STACK = 'PetStore-production';
const STACK_ID = `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${STACK}/0f5a8e10-cd6b-11ee-8a32-0a1b2c3d4e5f`;
const POLICY_FILE = join(PROJECT_ROOT, 'infra', 'deployer-policy.json');
const policy = JSON.parse(
  readFileSync(POLICY_FILE, 'utf8').replaceAll('<account>', ACCOUNT).replaceAll('<region>', REGION),
) as {
  Statement: { Sid: string; Action: string | string[]; Resource: string | string[] }[];
};
const of = synthesizedStages();

/** A resource's name as CloudFormation generates it: `<stack>-<logical id>-<random suffix>`. */
const generatedName = (logicalId: string) => `${STACK}-${logicalId}-AB12CD34EF56`;

interface Call {
  action: string;
  resource: string;
  context?: Record<string, string | string[]>;
}

async function decide({ action, resource, context = {} }: Call): Promise<string> {
  const result = await runSimulation(
    {
      request: {
        principal: `arn:aws:iam::${ACCOUNT}:user/deployer`,
        action,
        resource: { resource, accountId: ACCOUNT },
        contextVariables: context,
      },
      identityPolicies: [{ name: 'petstore-deployer', policy: policy as never }],
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    {},
  );
  if (result.resultType === 'error') throw new Error(`${action} on ${resource}: ${JSON.stringify(result.errors)}`);
  return result.overallResult;
}

const describeCall = ({ action, resource, context }: Call) =>
  `${action} on ${resource}${context ? ` ${JSON.stringify(context)}` : ''}`;

async function expectAll(calls: Call[], verdict: 'Allowed' | 'ImplicitlyDenied'): Promise<void> {
  expect(calls.length).toBeGreaterThan(0);
  const decided = await Promise.all(calls.map(async (call) => [describeCall(call), await decide(call)] as const));
  expect(decided.filter(([, result]) => result !== verdict).map(([call, result]) => `${result}: ${call}`)).toEqual([]);
}

/** The production stack's resources a deployer acts on, by CloudFormation's names. */
function productionResources() {
  const s = of('production');
  const resources = Object.entries(s.json.Resources);
  const ofType = (type: string) => resources.filter(([, r]) => r.Type === type);
  const [applicationId] = ofType('AWS::CodeDeploy::Application')[0]!;
  const groups = ofType('AWS::CodeDeploy::DeploymentGroup').map(
    ([id]) =>
      `arn:aws:codedeploy:${REGION}:${ACCOUNT}:deploymentgroup:${generatedName(applicationId)}/${generatedName(id)}`,
  );
  const aliased = ofType('AWS::Lambda::Alias').map(([, alias]) => (props(alias).FunctionName as { Ref: string }).Ref);
  const functions = aliased.map((id) => `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${generatedName(id)}`);
  const [topicId] = ofType('AWS::SNS::Topic')[0]!;
  const api5xx = ofType('AWS::CloudWatch::Alarm')
    .map(([, a]) => String(props(a).AlarmName))
    .find((name) => name.endsWith('-Api5xxRate'))!;
  const [controlId] = ofType('AWS::DynamoDB::Table').find(([id]) => id.startsWith('ControlTable'))!;
  return {
    groups,
    functions,
    topic: `arn:aws:sns:${REGION}:${ACCOUNT}:${generatedName(topicId)}`,
    api5xxAlarm: `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:${api5xx}`,
    controlTable: generatedName(controlId),
  };
}

describe('infra/deployer-policy.json', () => {
  it('grants no action on "*" but lambda:GetAccountSettings, which takes no resource; no lambda:UpdateAlias or any CodeDeploy action on "*"', () => {
    for (const statement of policy.Statement) {
      const actions = [statement.Action].flat();
      const resources = [statement.Resource].flat();
      expect(
        actions.every((action) => !action.includes('*')),
        statement.Sid,
      ).toBe(true);
      if (resources.includes('*')) expect(actions, statement.Sid).toEqual(['lambda:GetAccountSettings']);
    }
    const granted = policy.Statement.flatMap((statement) => [statement.Action].flat());
    expect(granted).toContain('lambda:UpdateAlias');
    expect(granted).not.toContain('codedeploy:StopDeployment');
  });

  it("allows the deploy's own calls: the bootstrap roles, the concurrency quota", async () => {
    const roles = ['deploy', 'file-publishing', 'image-publishing', 'lookup'].map(
      (role) => `arn:aws:iam::${ACCOUNT}:role/cdk-hnb659fds-${role}-role-${ACCOUNT}-${REGION}`,
    );
    await expectAll(
      [
        ...roles.map((resource) => ({ action: 'sts:AssumeRole', resource })),
        { action: 'lambda:GetAccountSettings', resource: '*' },
      ],
      'Allowed',
    );
    await expectAll(
      [{ action: 'sts:AssumeRole', resource: `arn:aws:iam::${ACCOUNT}:role/OrganizationAccountAccessRole` }],
      'ImplicitlyDenied',
    );
  });
});

describe('the calls npm run keys makes, recorded as it sends them', () => {
  const endpoint = useEmbeddedStore();
  let documents: DynamoDBDocumentClient;
  let gateway: Server;
  const calls: Call[] = [];
  let table: string;
  const saved = { key: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };

  beforeAll(async () => {
    table = productionResources().controlTable;
    await ensureControlTable(endpoint(), table);
    documents = createDocumentClient({ endpoint: endpoint() });
    // API Gateway's control plane as the CLI's client calls it: every call recorded as its IAM action on its path.
    let id = 0;
    gateway = createServer((request, response) => {
      const path = new URL(request.url ?? '/', 'http://x').pathname;
      calls.push({ action: `apigateway:${request.method}`, resource: `arn:aws:apigateway:${REGION}::${path}` });
      response.setHeader('Content-Type', 'application/json');
      if (request.method === 'GET')
        return response.end(
          JSON.stringify({
            item: [{ id: 'k1', name: new URL(request.url ?? '/', 'http://x').searchParams.get('name') }],
          }),
        );
      response.statusCode = request.method === 'DELETE' ? 202 : 201;
      response.end(request.method === 'DELETE' ? '' : JSON.stringify({ id: `key${++id}` }));
    });
    await new Promise<void>((listening) => gateway.listen(0, '127.0.0.1', listening));
    process.env.AWS_ACCESS_KEY_ID = 'AKIDEXAMPLE';
    process.env.AWS_SECRET_ACCESS_KEY = 'deployer';
  });
  afterAll(async () => {
    documents.destroy();
    await new Promise((closed) => gateway.close(closed));
    for (const [name, value] of [
      ['AWS_ACCESS_KEY_ID', saved.key],
      ['AWS_SECRET_ACCESS_KEY', saved.secret],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  async function keys(...argv: string[]): Promise<string> {
    const client = {
      send: (command: {
        constructor: { name: string };
        input: {
          TableName: string;
          Key?: { pk: string };
          Item?: { pk: string };
          ExpressionAttributeValues?: Record<string, string>;
        };
      }) => {
        const { input } = command;
        const partition = input.Key?.pk ?? input.Item?.pk ?? input.ExpressionAttributeValues?.[':pk'];
        calls.push({
          action: `dynamodb:${command.constructor.name
            .replace(/Command$/, '')
            .replace(/^Delete$/, 'DeleteItem')
            .replace(/^Get$/, 'GetItem')
            .replace(/^Put$/, 'PutItem')
            .replace(/^Update$/, 'UpdateItem')}`,
          resource: `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${input.TableName}`,
          context: { 'dynamodb:LeadingKeys': [String(partition)] },
        });
        return documents.send(command as never);
      },
    } as unknown as DynamoDBDocumentClient;
    const stacks: StackOutputsReader = {
      send: async (command) => {
        calls.push({ action: 'cloudformation:DescribeStacks', resource: STACK_ID });
        return {
          $metadata: {},
          Stacks: [
            {
              StackName: command.input.StackName,
              StackStatus: 'UPDATE_COMPLETE',
              CreationTime: new Date(),
              Outputs: [
                { OutputKey: 'ControlTableName', OutputValue: table },
                { OutputKey: 'UsagePlanId', OutputValue: 'plan42' },
              ],
            },
          ],
        };
      },
    };
    const out: string[] = [];
    const code = await runKeys(argv, {
      client,
      stacks,
      usagePlanKeys: apiGatewayUsagePlanKeys({
        region: REGION,
        endpoint: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`,
      }),
      out: (line) => out.push(line),
      err: (line) => out.push(line),
      stdoutIsTerminal: true,
      env: {},
    });
    expect(code, out.join('\n')).toBe(0);
    return out.join('\n');
  }

  it('allows every one of them, on the control table of the stack and its apikeys partition, and API Gateway keys', async () => {
    const created = await keys('create', '--stage', 'production');
    const keyId = API_KEY_FORMAT.exec(keyIn(created)!)![1]!;
    await keys('list', '--stage', 'production');
    const rotated = await keys('rotate', keyId, '--stage', 'production');
    const successor = API_KEY_FORMAT.exec(keyIn(rotated)!)![1]!;
    await keys('revoke', keyId, '--stage', 'production');
    await keys('revoke', successor, '--stage', 'production');
    const actions = new Set(calls.map((call) => call.action));
    expect([...actions].sort()).toEqual(
      [
        'apigateway:DELETE',
        'apigateway:GET',
        'apigateway:POST',
        'cloudformation:DescribeStacks',
        'dynamodb:DeleteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
      ].sort(),
    );
    await expectAll(calls, 'Allowed');
  });

  it('refuses the same calls anywhere else: another partition, another table, another API Gateway resource', async () => {
    const tableArn = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${table}`;
    await expectAll(
      [
        { action: 'dynamodb:GetItem', resource: tableArn, context: { 'dynamodb:LeadingKeys': ['cursor-secret'] } },
        { action: 'dynamodb:PutItem', resource: tableArn, context: { 'dynamodb:LeadingKeys': ['idempotency#x'] } },
        {
          action: 'dynamodb:Query',
          resource: `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${generatedName('PetsTable56B0D675')}`,
          context: { 'dynamodb:LeadingKeys': ['apikeys'] },
        },
        {
          action: 'dynamodb:DeleteItem',
          resource: `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/OtherService-Users`,
          context: { 'dynamodb:LeadingKeys': ['apikeys'] },
        },
        { action: 'apigateway:DELETE', resource: `arn:aws:apigateway:${REGION}::/restapis/abc123` },
        { action: 'apigateway:PATCH', resource: `arn:aws:apigateway:${REGION}::/usageplans/plan42` },
      ],
      'ImplicitlyDenied',
    );
  });
});

/** What each AWS CLI command of the runbook calls, on the production stack's resources. */
function runbookCalls(command: string): Call[] | 'administrator' | 'none' {
  const r = productionResources();
  const stack = (action: string) => [{ action, resource: STACK_ID }];
  const table: Record<string, Call[] | 'administrator' | 'none'> = {
    'sts get-caller-identity': 'none',
    'configure get': 'none',
    'cloudformation describe-stacks': stack('cloudformation:DescribeStacks'),
    'cloudformation describe-stack-events': stack('cloudformation:DescribeStackEvents'),
    'cloudformation wait': stack('cloudformation:DescribeStacks'),
    'cloudformation update-termination-protection': stack('cloudformation:UpdateTerminationProtection'),
    'cloudformation delete-stack': stack('cloudformation:DeleteStack'),
    'sns list-subscriptions-by-topic': [{ action: 'sns:ListSubscriptionsByTopic', resource: r.topic }],
    'deploy list-deployments': r.groups.map((resource) => ({ action: 'codedeploy:ListDeployments', resource })),
    'deploy get-deployment': r.groups.map((resource) => ({ action: 'codedeploy:GetDeployment', resource })),
    'cloudwatch set-alarm-state': [{ action: 'cloudwatch:SetAlarmState', resource: r.api5xxAlarm }],
    'lambda list-versions-by-function': r.functions.map((resource) => ({
      action: 'lambda:ListVersionsByFunction',
      resource,
    })),
    'lambda update-alias': r.functions.map((resource) => ({ action: 'lambda:UpdateAlias', resource })),
    'lambda get-account-settings': [{ action: 'lambda:GetAccountSettings', resource: '*' }],
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
  };
  const calls = table[command];
  if (!calls)
    throw new Error(
      `the runbook runs "aws ${command}": say in test/infra/deployerPolicy.test.ts what it calls, and whose it is`,
    );
  return calls;
}

describe('the AWS commands of docs/deploying.md and docs/operating.md', () => {
  const commands = [
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

  it("are a deployer's, allowed on the production stack's own resources, or an administrator's", async () => {
    expect(commands).toEqual(
      expect.arrayContaining([
        'deploy list-deployments',
        'cloudwatch set-alarm-state',
        'lambda update-alias',
        'cloudformation delete-stack',
      ]),
    );
    const deployers = commands.flatMap((command) => {
      const calls = runbookCalls(command);
      return Array.isArray(calls) ? calls : [];
    });
    await expectAll(deployers, 'Allowed');
    // An administrator's: refused to the deployer (deleting tables and logs, creating policies).
    const admin = commands.filter((command) => runbookCalls(command) === 'administrator');
    expect(admin).toEqual(expect.arrayContaining(['dynamodb delete-table', 'logs delete-log-group']));
    await expectAll(
      [
        {
          action: 'dynamodb:DeleteTable',
          resource: `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${productionResources().controlTable}`,
        },
        {
          action: 'logs:DeleteLogGroup',
          resource: `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${STACK}-ListPetsLogs-AB12CD34EF56`,
        },
        { action: 'iam:CreatePolicy', resource: `arn:aws:iam::${ACCOUNT}:policy/petstore-deployer` },
      ],
      'ImplicitlyDenied',
    );
  });

  it('refuses the rollback rights on anything but production: another function, another alarm, another deployment group, staging', async () => {
    await expectAll(
      [
        { action: 'lambda:UpdateAlias', resource: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:OtherService-api` },
        {
          action: 'lambda:UpdateAlias',
          resource: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:PetStore-staging-ListPetsFunction7A3F240D-AB12CD34EF56`,
        },
        {
          action: 'cloudwatch:SetAlarmState',
          resource: `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:petstore-production-Unauthorized`,
        },
        { action: 'cloudwatch:SetAlarmState', resource: `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:billing` },
        {
          action: 'codedeploy:ListDeployments',
          resource: `arn:aws:codedeploy:${REGION}:${ACCOUNT}:deploymentgroup:OtherApp/OtherGroup`,
        },
        { action: 'codedeploy:StopDeployment', resource: '*' },
        {
          action: 'cloudformation:DeleteStack',
          resource: `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/OtherService/0f5a8e10-cd6b-11ee-8a32-0a1b2c3d4e5f`,
        },
      ],
      'ImplicitlyDenied',
    );
  });
});
