import { beforeAll, describe, expect, it } from 'vitest';
import type { CfnTemplate } from '../../tools/stage-emulator/src/cloudAssembly.ts';
import {
  OFFLINE_ENVIRONMENT,
  TemplateResolutionError,
  TemplateResolver,
} from '../../tools/stage-emulator/src/intrinsics.ts';
import { STAGES, type Stage } from '../../infra/stages.ts';
import { synthesize, testApp } from '../infra/synth.ts';

/** Every place in a resolved value where an object still stands (an unresolved intrinsic). */
function objectsLeft(value: unknown, path = '$'): string[] {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return [];
  if (Array.isArray(value)) return value.flatMap((item, index) => objectsLeft(item, `${path}[${index}]`));
  if (value && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.some((key) => key === 'Ref' || key.startsWith('Fn::'))) return [path];
    return keys.flatMap((key) => objectsLeft((value as Record<string, unknown>)[key], `${path}.${key}`));
  }
  return [`${path} (${String(value)})`];
}

describe('on the synthesized templates', () => {
  const templates = new Map<Stage, CfnTemplate>();
  beforeAll(() => {
    const { stacks } = testApp();
    for (const [stage, stack] of stacks) templates.set(stage, synthesize(stack).json as unknown as CfnTemplate);
  });

  const entries = (template: CfnTemplate, type: string) =>
    Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);

  describe.each(STAGES)('%s', (stage) => {
    const stackName = `PetStore-${stage}`;
    // Production's AlarmEmail has no default: `cdk deploy` must be given one, and so must the resolver.
    const resolverFor = () =>
      new TemplateResolver({ stackName, template: templates.get(stage)! }, OFFLINE_ENVIRONMENT, {
        AlarmEmail: 'ops@example.com',
      });

    it('resolves every Lambda environment variable to a string', () => {
      const template = templates.get(stage)!;
      const resolver = resolverFor();
      const functions = entries(template, 'AWS::Lambda::Function');
      expect(functions).toHaveLength(4);
      for (const [id, fn] of functions) {
        const variables = resolver.resolve((fn.Properties!.Environment as { Variables: unknown }).Variables) as Record<
          string,
          unknown
        >;
        // The key authorizer reads the control table only.
        if (id.startsWith('AuthorizerFunction')) {
          expect(Object.keys(variables)).toEqual(['CONTROL_TABLE_NAME']);
          expect(variables.CONTROL_TABLE_NAME).toMatch(new RegExp(`^PetStore-${stage}-ControlTable[0-9A-F]{8}$`));
          continue;
        }
        expect(Object.keys(variables).sort()).toEqual(['CONTROL_TABLE_NAME', 'STATUS_INDEX_SHARDS', 'TABLE_NAME']);
        for (const value of Object.values(variables)) expect(typeof value).toBe('string');
        expect(variables.TABLE_NAME).toBe(
          `${stackName}-${Object.keys(template.Resources).find((id) => id.startsWith('PetsTable'))}`,
        );
        expect(variables.CONTROL_TABLE_NAME).toMatch(new RegExp(`^PetStore-${stage}-ControlTable[0-9A-F]{8}$`));
      }
    });

    it('resolves every IAM policy to plain strings, with table, index and log group ARNs', () => {
      const template = templates.get(stage)!;
      const resolver = resolverFor();
      const roles = entries(template, 'AWS::IAM::Role');
      const policies = [
        ...roles.flatMap(([, role]) => (role.Properties?.Policies as { PolicyDocument: unknown }[] | undefined) ?? []),
        ...entries(template, 'AWS::IAM::Policy').map(([, policy]) => policy.Properties),
      ];
      expect(policies.length).toBeGreaterThanOrEqual(3);
      for (const policy of policies) expect(objectsLeft(resolver.resolve(policy))).toEqual([]);
      for (const [, role] of roles) expect(objectsLeft(resolver.resolve(role.Properties))).toEqual([]);
      const text = JSON.stringify(resolver.resolve(policies));
      expect(text).toMatch(
        new RegExp(`"arn:aws:dynamodb:us-east-1:123456789012:table/PetStore-${stage}-ControlTable[0-9A-F]{8}"`),
      );
      expect(text).toMatch(
        new RegExp(`arn:aws:dynamodb:us-east-1:123456789012:table/${stackName}-PetsTable\\w+/index/status-index`),
      );
      expect(text).toMatch(
        new RegExp(`arn:aws:logs:us-east-1:123456789012:log-group:${stackName}-ListPetsLogs\\w+:\\*`),
      );
    });

    it("resolves every proxy integration Uri to the invocation path of its function's live alias", () => {
      const template = templates.get(stage)!;
      const resolver = resolverFor();
      const proxies = entries(template, 'AWS::ApiGateway::Method').filter(
        ([, method]) => (method.Properties!.Integration as { Type?: string }).Type === 'AWS_PROXY',
      );
      expect(proxies).toHaveLength(3);
      const aliases = entries(template, 'AWS::Lambda::Alias');
      for (const [, method] of proxies) {
        const uri = resolver.resolve((method.Properties!.Integration as { Uri: unknown }).Uri);
        expect(typeof uri).toBe('string');
        const match =
          /^arn:aws:apigateway:us-east-1:lambda:path\/2015-03-31\/functions\/(arn:aws:lambda:us-east-1:123456789012:function:([\w-]+):live)\/invocations$/.exec(
            uri as string,
          );
        expect(match, String(uri)).not.toBeNull();
        const [aliasId, alias] = aliases.find(([id]) => resolver.ref(id) === match![1])!;
        expect(alias.Properties?.Name).toBe('live');
        const functionId = (alias.Properties!.FunctionName as { Ref: string }).Ref;
        expect(match![2]).toBe(resolver.ref(functionId));
        expect(resolver.getAtt(aliasId, 'AliasArn')).toBe(match![1]);
      }
    });

    it('resolves the whole template, resources and outputs, leaving no intrinsic', () => {
      const template = templates.get(stage)!;
      const resolver = resolverFor();
      expect(objectsLeft(resolver.resolve(template.Resources))).toEqual([]);
      const outputs = resolver.resolve(template.Outputs) as Record<string, { Value: string }>;
      expect(objectsLeft(outputs)).toEqual([]);
      const apiId = resolver.ref(entries(template, 'AWS::ApiGateway::RestApi')[0]![0]);
      expect(outputs.ApiUrl!.Value).toBe(`https://${apiId}.execute-api.us-east-1.amazonaws.com/v1/`);
    });
  });

  it('gives each stage its own API id, deterministically', () => {
    const ids = STAGES.map((stage) => {
      const template = templates.get(stage)!;
      const apiId = entries(template, 'AWS::ApiGateway::RestApi')[0]![0];
      return [
        new TemplateResolver({ stackName: `PetStore-${stage}`, template }).ref(apiId),
        new TemplateResolver({ stackName: `PetStore-${stage}`, template }).ref(apiId),
      ];
    });
    for (const [first, again] of ids) {
      expect(first).toMatch(/^[a-z0-9]{10}$/);
      expect(again).toBe(first);
    }
    expect(ids[0]![0]).not.toBe(ids[1]![0]);
  });
});

describe('TemplateResolver, intrinsic by intrinsic', () => {
  const template: CfnTemplate = {
    Parameters: {
      Given: { Type: 'String' },
      Defaulted: { Type: 'String', Default: 'from-default' },
      Required: { Type: 'String' },
      Zones: { Type: 'CommaDelimitedList', Default: 'a,b' },
    },
    Conditions: {
      IsProd: { 'Fn::Equals': [{ Ref: 'Given' }, 'prod'] },
      IsNotProd: { 'Fn::Not': [{ Condition: 'IsProd' }] },
      InUsEast1: { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'] },
      ProdInUsEast1: { 'Fn::And': [{ Condition: 'IsProd' }, { Condition: 'InUsEast1' }] },
      ProdOrUsEast1: { 'Fn::Or': [{ Condition: 'IsProd' }, { Condition: 'InUsEast1' }] },
    },
    Resources: {
      Pets: { Type: 'AWS::DynamoDB::Table', Properties: {} },
      Control: { Type: 'AWS::DynamoDB::Table', Properties: { TableName: { 'Fn::Sub': 'petstore-${Given}-control' } } },
      Streamed: { Type: 'AWS::DynamoDB::Table', Properties: { StreamSpecification: { StreamViewType: 'NEW_IMAGE' } } },
      Fn: { Type: 'AWS::Lambda::Function', Properties: {} },
      NamedFn: { Type: 'AWS::Lambda::Function', Properties: { FunctionName: 'named-fn' } },
      FnV1: { Type: 'AWS::Lambda::Version', Properties: { FunctionName: { Ref: 'Fn' } } },
      FnV2: { Type: 'AWS::Lambda::Version', Properties: { FunctionName: { 'Fn::GetAtt': ['Fn', 'Arn'] } } },
      Live: {
        Type: 'AWS::Lambda::Alias',
        Properties: {
          FunctionName: { Ref: 'Fn' },
          FunctionVersion: { 'Fn::GetAtt': ['FnV1', 'Version'] },
          Name: 'live',
        },
      },
      Role: { Type: 'AWS::IAM::Role', Properties: {} },
      PathRole: { Type: 'AWS::IAM::Role', Properties: { RoleName: 'runner', Path: '/service/' } },
      Policy: { Type: 'AWS::IAM::Policy', Properties: { PolicyName: 'p', Roles: [{ Ref: 'Role' }] } },
      Logs: { Type: 'AWS::Logs::LogGroup', Properties: {} },
      NamedLogs: { Type: 'AWS::Logs::LogGroup', Properties: { LogGroupName: '/aws/lambda/named-fn' } },
      Api: { Type: 'AWS::ApiGateway::RestApi', Properties: { Name: 'petstore' } },
      OtherApi: { Type: 'AWS::ApiGateway::RestApi', Properties: {} },
      PetsResource: { Type: 'AWS::ApiGateway::Resource', Properties: { RestApiId: { Ref: 'Api' } } },
      Deployment: { Type: 'AWS::ApiGateway::Deployment', Properties: { RestApiId: { Ref: 'Api' } } },
      Stage: { Type: 'AWS::ApiGateway::Stage', Properties: { StageName: 'v1', DeploymentId: { Ref: 'Deployment' } } },
      Topic: { Type: 'AWS::SNS::Topic', Properties: {} },
      Alarm: { Type: 'AWS::CloudWatch::Alarm', Properties: { AlarmName: 'too-many-errors' } },
      UnnamedAlarm: { Type: 'AWS::CloudWatch::Alarm', Properties: {} },
      Deploys: { Type: 'AWS::CodeDeploy::Application', Properties: {} },
      Canary: { Type: 'AWS::CodeDeploy::DeploymentGroup', Properties: { DeploymentGroupName: 'canary' } },
      Waf: { Type: 'AWS::WAFv2::WebACL', Properties: { Name: 'acl', Scope: 'REGIONAL' } },
      Vault: { Type: 'AWS::Backup::BackupVault', Properties: { BackupVaultName: 'petstore-vault' } },
      Plan: { Type: 'AWS::Backup::BackupPlan', Properties: {} },
      Widget: { Type: 'Custom::Widget', Properties: {} },
      Loop: { Type: 'AWS::DynamoDB::Table', Properties: { TableName: { Ref: 'Loop' } } },
    },
  };
  const resolver = new TemplateResolver({ stackName: 'Stack', template }, OFFLINE_ENVIRONMENT, { Given: 'prod' });
  const rejection = (run: () => unknown): string => {
    try {
      run();
    } catch (error) {
      expect(error).toBeInstanceOf(TemplateResolutionError);
      return (error as Error).message;
    }
    throw new Error('expected a TemplateResolutionError');
  };

  it('Ref: parameters (given, Default, list) and a clear error for one with no value', () => {
    expect(resolver.resolve({ Ref: 'Given' })).toBe('prod');
    expect(resolver.resolve({ Ref: 'Defaulted' })).toBe('from-default');
    expect(resolver.resolve({ Ref: 'Zones' })).toEqual(['a', 'b']);
    expect(rejection(() => resolver.resolve({ Ref: 'Required' }))).toMatch(/parameter Required has no value/);
    expect(rejection(() => resolver.resolve({ Ref: 'Nothing' }))).toMatch(/No resource or parameter Nothing/);
  });

  it('Ref: pseudo parameters', () => {
    const pseudo = (name: string) => resolver.resolve({ Ref: `AWS::${name}` });
    expect(pseudo('Region')).toBe('us-east-1');
    expect(pseudo('AccountId')).toBe('123456789012');
    expect(pseudo('Partition')).toBe('aws');
    expect(pseudo('StackName')).toBe('Stack');
    expect(pseudo('URLSuffix')).toBe('amazonaws.com');
    expect(pseudo('StackId')).toMatch(/^arn:aws:cloudformation:us-east-1:123456789012:stack\/Stack\/[0-9a-f-]{36}$/);
    expect(pseudo('StackId')).toBe(pseudo('StackId'));
  });

  it('AWS::NoValue removes the key or the element', () => {
    expect(resolver.resolve({ A: 'a', B: { Ref: 'AWS::NoValue' } })).toEqual({ A: 'a' });
    expect(resolver.resolve(['a', { Ref: 'AWS::NoValue' }, 'b'])).toEqual(['a', 'b']);
    expect(resolver.resolve({ A: { 'Fn::If': ['IsNotProd', 'x', { Ref: 'AWS::NoValue' }] } })).toEqual({});
  });

  it('Fn::Join, Fn::Select, Fn::Split', () => {
    expect(resolver.resolve({ 'Fn::Join': [':', ['a', { Ref: 'AWS::Region' }, 3]] })).toBe('a:us-east-1:3');
    expect(resolver.resolve({ 'Fn::Join': ['', []] })).toBe('');
    expect(resolver.resolve({ 'Fn::Select': ['1', ['a', 'b', 'c']] })).toBe('b');
    expect(resolver.resolve({ 'Fn::Select': [0, { 'Fn::Split': ['/', 'x/y'] }] })).toBe('x');
    expect(resolver.resolve({ 'Fn::Split': [',', { Ref: 'Defaulted' }] })).toEqual(['from-default']);
    expect(rejection(() => resolver.resolve({ 'Fn::Select': [5, ['a']] }))).toMatch(/Fn::Select: index 5/);
  });

  it('Fn::Sub: the string form, the form with variables, pseudo parameters, attributes and literals', () => {
    expect(resolver.resolve({ 'Fn::Sub': 'arn:${AWS::Partition}:s3:::b-${AWS::Region}-${Given}' })).toBe(
      'arn:aws:s3:::b-us-east-1-prod',
    );
    expect(resolver.resolve({ 'Fn::Sub': '${Pets.Arn}/index/*' })).toBe(
      'arn:aws:dynamodb:us-east-1:123456789012:table/Stack-Pets/index/*',
    );
    expect(resolver.resolve({ 'Fn::Sub': ['${Name}-${Pets}', { Name: { Ref: 'AWS::StackName' } }] })).toBe(
      'Stack-Stack-Pets',
    );
    expect(resolver.resolve({ 'Fn::Sub': '${!Literal} costs $5' })).toBe('${Literal} costs $5');
  });

  it('Fn::If with Fn::Equals, Fn::Not, Fn::And, Fn::Or and Condition', () => {
    const pick = (condition: string) => resolver.resolve({ 'Fn::If': [condition, 'yes', 'no'] });
    expect([pick('IsProd'), pick('IsNotProd'), pick('ProdInUsEast1'), pick('ProdOrUsEast1')]).toEqual([
      'yes',
      'no',
      'yes',
      'yes',
    ]);
    const staging = new TemplateResolver(
      { stackName: 'Stack', template },
      { ...OFFLINE_ENVIRONMENT, region: 'eu-west-1' },
      { Given: 'staging' },
    );
    const pickStaging = (condition: string) => staging.resolve({ 'Fn::If': [condition, 'yes', 'no'] });
    expect([
      pickStaging('IsProd'),
      pickStaging('IsNotProd'),
      pickStaging('ProdInUsEast1'),
      pickStaging('ProdOrUsEast1'),
    ]).toEqual(['no', 'yes', 'no', 'no']);
    expect(rejection(() => resolver.resolve({ 'Fn::If': ['Unknown', 'a', 'b'] }))).toMatch(/No condition Unknown/);
  });

  it('Fn::GetAtt in both forms; an unknown attribute is an error naming it', () => {
    expect(resolver.resolve({ 'Fn::GetAtt': 'Pets.Arn' })).toBe(resolver.resolve({ 'Fn::GetAtt': ['Pets', 'Arn'] }));
    expect(rejection(() => resolver.getAtt('Pets', 'Colour'))).toBe(
      'Fn::GetAtt Pets.Colour: attribute Colour of AWS::DynamoDB::Table is not known offline (known: Arn, StreamArn).',
    );
    expect(rejection(() => resolver.getAtt('Widget', 'Size'))).toMatch(/attribute Size of Custom::Widget/);
  });

  it('names resources as CloudFormation does: the name property, else <stackName>-<logicalId>', () => {
    expect(resolver.ref('Pets')).toBe('Stack-Pets');
    expect(resolver.ref('Control')).toBe('petstore-prod-control');
    expect(resolver.ref('Fn')).toBe('Stack-Fn');
    expect(resolver.ref('NamedFn')).toBe('named-fn');
    expect(resolver.ref('Logs')).toBe('Stack-Logs');
    expect(resolver.ref('NamedLogs')).toBe('/aws/lambda/named-fn');
    expect(resolver.ref('Alarm')).toBe('too-many-errors');
    expect(resolver.ref('UnnamedAlarm')).toBe('Stack-UnnamedAlarm');
    expect(resolver.ref('Deploys')).toBe('Stack-Deploys');
    expect(resolver.ref('Canary')).toBe('canary');
    expect(resolver.ref('Widget')).toBe('Stack-Widget');
  });

  it('DynamoDB tables: Ref name, Arn, StreamArn only with a stream', () => {
    expect(resolver.getAtt('Control', 'Arn')).toBe(
      'arn:aws:dynamodb:us-east-1:123456789012:table/petstore-prod-control',
    );
    expect(resolver.getAtt('Streamed', 'StreamArn')).toMatch(
      /^arn:aws:dynamodb:us-east-1:123456789012:table\/Stack-Streamed\/stream\/.+/,
    );
    expect(rejection(() => resolver.getAtt('Pets', 'StreamArn'))).toMatch(/Pets has no stream/);
  });

  it('Lambda functions, versions and aliases', () => {
    expect(resolver.getAtt('Fn', 'Arn')).toBe('arn:aws:lambda:us-east-1:123456789012:function:Stack-Fn');
    expect(resolver.ref('FnV1')).toBe('arn:aws:lambda:us-east-1:123456789012:function:Stack-Fn:1');
    expect(resolver.getAtt('FnV1', 'Version')).toBe('1');
    expect(resolver.getAtt('FnV2', 'Version')).toBe('2');
    expect(resolver.ref('Live')).toBe('arn:aws:lambda:us-east-1:123456789012:function:Stack-Fn:live');
  });

  it('IAM roles and policies, log groups', () => {
    expect(resolver.ref('Role')).toBe('Stack-Role');
    expect(resolver.getAtt('Role', 'Arn')).toBe('arn:aws:iam::123456789012:role/Stack-Role');
    expect(resolver.getAtt('PathRole', 'Arn')).toBe('arn:aws:iam::123456789012:role/service/runner');
    expect(resolver.getAtt('Role', 'RoleId')).toMatch(/^AROA[A-Z0-9]{17}$/);
    expect(resolver.getAtt('Role', 'RoleId')).not.toBe(resolver.getAtt('PathRole', 'RoleId'));
    expect(resolver.ref('Policy')).toBe('Stack-Policy');
    expect(resolver.getAtt('Logs', 'Arn')).toBe('arn:aws:logs:us-east-1:123456789012:log-group:Stack-Logs:*');
    expect(resolver.getAtt('NamedLogs', 'Arn')).toBe(
      'arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/named-fn:*',
    );
  });

  it('API Gateway: deterministic ids for the API, its root and resources; the stage name', () => {
    const apiId = resolver.ref('Api');
    expect(apiId).toMatch(/^[a-z0-9]{10}$/);
    expect(new TemplateResolver({ stackName: 'Stack', template }).ref('Api')).toBe(apiId);
    expect(resolver.ref('OtherApi')).not.toBe(apiId);
    expect(resolver.getAtt('Api', 'RootResourceId')).toMatch(/^[a-z0-9]{10}$/);
    expect(resolver.getAtt('Api', 'RootResourceId')).not.toBe(apiId);
    expect(resolver.ref('PetsResource')).toMatch(/^[a-z0-9]{6}$/);
    expect(resolver.ref('Deployment')).toMatch(/^[a-z0-9]{6}$/);
    expect(resolver.ref('Stage')).toBe('v1');
  });

  it('SNS topics, alarms, WAF web ACLs', () => {
    expect(resolver.ref('Topic')).toBe('arn:aws:sns:us-east-1:123456789012:Stack-Topic');
    expect(resolver.getAtt('Topic', 'TopicName')).toBe('Stack-Topic');
    expect(resolver.getAtt('Alarm', 'Arn')).toBe('arn:aws:cloudwatch:us-east-1:123456789012:alarm:too-many-errors');
    const wafId = resolver.getAtt('Waf', 'Id');
    expect(wafId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(resolver.getAtt('Waf', 'Arn')).toBe(`arn:aws:wafv2:us-east-1:123456789012:regional/webacl/acl/${wafId}`);
  });

  it('AWS Backup vaults and plans', () => {
    expect(resolver.ref('Vault')).toBe('petstore-vault');
    expect(resolver.getAtt('Vault', 'BackupVaultName')).toBe('petstore-vault');
    expect(resolver.getAtt('Vault', 'BackupVaultArn')).toBe(
      'arn:aws:backup:us-east-1:123456789012:backup-vault:petstore-vault',
    );
    const planId = resolver.ref('Plan');
    expect(resolver.getAtt('Plan', 'BackupPlanId')).toBe(planId);
    expect(resolver.getAtt('Plan', 'BackupPlanArn')).toBe(
      `arn:aws:backup:us-east-1:123456789012:backup-plan:${planId}`,
    );
  });

  it('refuses a reference cycle and an unsupported function with one line', () => {
    expect(rejection(() => resolver.ref('Loop'))).toMatch(/Circular reference in the template at Ref Loop/);
    expect(rejection(() => resolver.resolve({ 'Fn::ImportValue': 'x' }))).toMatch(
      /^Fn::ImportValue is not supported offline/,
    );
    expect(rejection(() => resolver.resolveString({ 'Fn::Split': [',', 'a,b'] }))).toMatch(/Expected a string/);
  });
});
