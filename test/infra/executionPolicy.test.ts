/**
 * Each stack's CloudFormation execution policy and bootstrap boundary, as `npm run synth` writes them
 * from the cloud assembly (tools/policies/executionPolicy.ts): every resource type of every template
 * covered, IAM held to the stack's own roles, and one stage's bootstrap roles kept off the other's
 * stack, evaluated with IAM's rules (@cloud-copilot/iam-simulate).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_QUALIFIERS } from '../../infra/names.ts';
import {
  MANAGED_POLICY_MAX_CHARACTERS,
  assemblyStacks,
  bootstrapBoundary,
  executionPolicies,
  executionPolicy,
  filledSize,
  uncoveredTypes,
  writeStackPolicies,
  type AssemblyStack,
} from '../../tools/policies/executionPolicy.ts';
import { RESOURCE_ACTIONS } from '../../tools/policies/resourceActions.ts';
import { ACCOUNT, REGION, expectAll, filled, type Call, type Policy, type Principal } from './iamSimulation.ts';
import { testApp } from './synth.ts';

let outdir: string;
let stacks: AssemblyStack[];
const stack = (name: string) => stacks.find((s) => s.stackName === name)!;

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'petstore-assembly-'));
  testApp({ outdir }).app.synth();
  stacks = assemblyStacks(outdir);
});
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/** The execution role of a stack: its policy parts, filled, and its qualifier's boundary. */
const executionRole = (name: string): Principal => ({
  identity: executionPolicies(stack(name)).map((part) => filled(JSON.stringify(part))),
  boundary: filled(JSON.stringify(bootstrapBoundary(stack(name), stacks))),
});

/** A name as CloudFormation generates it for a resource of `stackName`. */
const generated = (stackName: string, logicalId: string) => `${stackName}-${logicalId}-AB12CD34EF56`;
const role = (name: string) => `arn:aws:iam::${ACCOUNT}:role/${name}`;
const fn = (name: string) => `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`;
const table = (name: string) => `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${name}`;
const stackArn = (name: string) =>
  `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${name}/0f5a8e10-cd6b-11ee-8a32-0a1b2c3d4e5f`;
const XRAY = 'arn:aws:iam::aws:policy/AWSXRayDaemonWriteAccess';

describe('the CloudFormation execution policies, from the cloud assembly', () => {
  it('cover every resource type of every synthesized template, and name a type they do not', () => {
    expect(stacks.map((s) => s.stackName).sort()).toEqual([
      'PetStore-account',
      'PetStore-production',
      'PetStore-staging',
    ]);
    for (const s of stacks) expect(uncoveredTypes(s.template), s.stackName).toEqual([]);
    const planted = structuredClone(stack('PetStore-staging'));
    planted.template.Resources.Queue = { Type: 'AWS::SQS::Queue' };
    expect(uncoveredTypes(planted.template)).toEqual(['AWS::SQS::Queue']);
    expect(() => executionPolicy(planted)).toThrow(/PetStore-staging: no execution-policy grants for AWS::SQS::Queue/);
  });

  it('cover the types the stacks are growing into: backups, web ACLs, canaries, alarms', () => {
    expect(Object.keys(RESOURCE_ACTIONS)).toEqual(
      expect.arrayContaining([
        'AWS::Backup::BackupPlan',
        'AWS::Backup::BackupVault',
        'AWS::Backup::BackupSelection',
        'AWS::WAFv2::WebACL',
        'AWS::WAFv2::WebACLAssociation',
        'AWS::WAFv2::LoggingConfiguration',
        'AWS::CodeDeploy::Application',
        'AWS::CodeDeploy::DeploymentGroup',
        'AWS::CloudWatch::Alarm',
        'AWS::CloudWatch::CompositeAlarm',
        'AWS::CloudWatch::Dashboard',
        'AWS::IAM::Policy',
        // What `cdk synth` adds (version reporting), which the test app leaves out.
        'AWS::CDK::Metadata',
      ]),
    );
  });

  it("are written by npm run synth beside the templates, each part within IAM's size limit, no part of an earlier synth left", () => {
    writeFileSync(join(outdir, 'PetStore-staging.execution-policy-9.json'), '{}');
    const written = writeStackPolicies(outdir).map((file) => file.slice(outdir.length + 1));
    expect(written).toEqual(
      expect.arrayContaining([
        'PetStore-staging.execution-policy-1.json',
        'PetStore-production.bootstrap-boundary.json',
      ]),
    );
    const parts = readdirSync(outdir).filter((name) => name.includes('.execution-policy-'));
    expect(parts.sort()).toEqual(written.filter((name) => name.includes('.execution-policy-')).sort());
    for (const file of parts)
      expect(filledSize(JSON.parse(readFileSync(join(outdir, file), 'utf8'))), file).toBeLessThanOrEqual(
        MANAGED_POLICY_MAX_CHARACTERS,
      );
  });

  it("keep each stack's name whole in the names CloudFormation generates, which the policies match on", () => {
    // CloudFormation shortens a generated name past its limit (64 for a role) by keeping at most 25
    // characters of the stack name; `role/<stack>-*` holds while the stack name fits in them.
    for (const s of stacks) expect(s.stackName.length, s.stackName).toBeLessThanOrEqual(25);
    for (const [stage, qualifier] of Object.entries(BOOTSTRAP_QUALIFIERS))
      expect(stacks.find((s) => s.stackName === `PetStore-${stage}`)?.qualifier).toBe(qualifier);
  });

  it("allow what CloudFormation does for the stack's own resources", async () => {
    const stagingRole = role(generated('PetStore-staging', 'ListPetsRoleECF812AE'));
    const calls: Call[] = [
      { action: 'iam:CreateRole', resource: stagingRole },
      { action: 'iam:PutRolePolicy', resource: stagingRole },
      { action: 'iam:AttachRolePolicy', resource: stagingRole, context: { 'iam:PolicyARN': XRAY } },
      { action: 'iam:PassRole', resource: stagingRole, context: { 'iam:PassedToService': 'lambda.amazonaws.com' } },
      { action: 'lambda:CreateFunction', resource: fn(generated('PetStore-staging', 'ListPetsFunction7A3F240D')) },
      { action: 's3:GetObject', resource: `arn:aws:s3:::cdk-psstaging-assets-${ACCOUNT}-${REGION}/abc.zip` },
      { action: 'dynamodb:CreateTable', resource: table(generated('PetStore-staging', 'PetsTable56B0D675')) },
      {
        action: 'cloudwatch:PutMetricAlarm',
        resource: `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:petstore-staging-Api5xxRate`,
      },
      { action: 'apigateway:POST', resource: `arn:aws:apigateway:${REGION}::/restapis` },
    ];
    await expectAll(executionRole('PetStore-staging'), calls, 'Allowed');
    await expectAll(
      executionRole('PetStore-production'),
      [
        {
          action: 'codedeploy:CreateDeploymentGroup',
          resource: `arn:aws:codedeploy:${REGION}:${ACCOUNT}:deploymentgroup:${generated('PetStore-production', 'Deploys47DEB118')}/x`,
        },
        {
          action: 'wafv2:CreateWebACL',
          resource: `arn:aws:wafv2:${REGION}:${ACCOUNT}:regional/webacl/petstore-production/abc`,
        },
        {
          action: 'iam:PassRole',
          resource: role(generated('PetStore-production', 'ListPetsCanaryServiceRoleC32819D1')),
          context: { 'iam:PassedToService': 'codedeploy.amazonaws.com' },
        },
      ],
      'Allowed',
    );
    await expectAll(
      executionRole('PetStore-account'),
      [
        { action: 'apigateway:PATCH', resource: `arn:aws:apigateway:${REGION}::/account` },
        {
          action: 'iam:PassRole',
          resource: role(generated('PetStore-account', 'ApiGatewayCloudWatchRole86F22A4D')),
          context: { 'iam:PassedToService': 'apigateway.amazonaws.com' },
        },
      ],
      'Allowed',
    );
  });

  it('refuse users, other roles, other policies, other services and the other stage', async () => {
    const own = role(generated('PetStore-staging', 'ListPetsRoleECF812AE'));
    const denied: Call[] = [
      { action: 'iam:CreateUser', resource: `arn:aws:iam::${ACCOUNT}:user/intruder` },
      { action: 'iam:CreateAccessKey', resource: `arn:aws:iam::${ACCOUNT}:user/deployer` },
      { action: 'iam:CreateRole', resource: role('Admin') },
      { action: 'iam:CreateRole', resource: role(generated('PetStore-production', 'ListPetsRoleECF812AE')) },
      {
        action: 'iam:AttachRolePolicy',
        resource: role('OrganizationAccountAccessRole'),
        context: { 'iam:PolicyARN': XRAY },
      },
      {
        action: 'iam:AttachRolePolicy',
        resource: own,
        context: { 'iam:PolicyARN': 'arn:aws:iam::aws:policy/AdministratorAccess' },
      },
      { action: 'iam:PutRolePolicy', resource: role(`cdk-psstaging-cfn-exec-role-${ACCOUNT}-${REGION}`) },
      { action: 'iam:PassRole', resource: own, context: { 'iam:PassedToService': 'ec2.amazonaws.com' } },
      {
        action: 'iam:PassRole',
        resource: role(`cdk-psprod-cfn-exec-role-${ACCOUNT}-${REGION}`),
        context: { 'iam:PassedToService': 'cloudformation.amazonaws.com' },
      },
      { action: 'iam:CreatePolicyVersion', resource: `arn:aws:iam::${ACCOUNT}:policy/cdk-psstaging-cfn-execution-1` },
      {
        action: 'lambda:UpdateFunctionCode',
        resource: fn(generated('PetStore-production', 'ListPetsFunction7A3F240D')),
      },
      { action: 'dynamodb:DeleteTable', resource: table(generated('PetStore-production', 'PetsTable56B0D675')) },
      {
        action: 'cloudwatch:DeleteAlarms',
        resource: `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:petstore-production-Api5xxRate`,
      },
      { action: 's3:GetObject', resource: `arn:aws:s3:::cdk-psprod-assets-${ACCOUNT}-${REGION}/abc.zip` },
      { action: 'ec2:RunInstances', resource: `arn:aws:ec2:${REGION}:${ACCOUNT}:instance/*` },
    ];
    await expectAll(executionRole('PetStore-staging'), denied, 'Denied');
  });
});

describe("the bootstrap roles' boundary", () => {
  /** The bootstrap deploy role's own grants (aws-cdk's bootstrap template): every stack of the account. */
  const deployRole = (name: string): Principal => ({
    identity: [
      {
        Statement: [
          {
            Sid: 'DeployPermissions',
            Effect: 'Allow',
            Action: [
              'cloudformation:CreateChangeSet',
              'cloudformation:ExecuteChangeSet',
              'cloudformation:DeleteStack',
              'cloudformation:UpdateTerminationProtection',
            ],
            Resource: '*',
          },
          { Sid: 'PassRole', Effect: 'Allow', Action: 'iam:PassRole', Resource: role('cdk-*-cfn-exec-role-*') },
        ],
      } as unknown as Policy,
    ],
    boundary: filled(JSON.stringify(bootstrapBoundary(stack(name), stacks))),
  });

  it("lets a stage's deploy role change its own stack only: not the other stage's, nor the account stack", async () => {
    const staging = deployRole('PetStore-staging');
    await expectAll(
      staging,
      [
        { action: 'cloudformation:CreateChangeSet', resource: stackArn('PetStore-staging') },
        { action: 'cloudformation:DeleteStack', resource: stackArn('PetStore-staging') },
        { action: 'iam:PassRole', resource: role(`cdk-psstaging-cfn-exec-role-${ACCOUNT}-${REGION}`) },
      ],
      'Allowed',
    );
    await expectAll(
      staging,
      [
        { action: 'cloudformation:CreateChangeSet', resource: stackArn('PetStore-production') },
        { action: 'cloudformation:ExecuteChangeSet', resource: stackArn('PetStore-production') },
        { action: 'cloudformation:UpdateTerminationProtection', resource: stackArn('PetStore-production') },
        { action: 'cloudformation:DeleteStack', resource: stackArn('PetStore-account') },
        { action: 'iam:PassRole', resource: role(`cdk-psprod-cfn-exec-role-${ACCOUNT}-${REGION}`) },
      ],
      'Denied',
    );
    await expectAll(
      deployRole('PetStore-production'),
      [{ action: 'cloudformation:DeleteStack', resource: stackArn('PetStore-staging') }],
      'Denied',
    );
  });
});
