/**
 * The synthesized templates of both stacks, checked against the shared definitions in lib/:
 * table, functions, least-privilege IAM, the REST API, its gateway responses and mocks, outputs.
 * No bundling here (see synth.ts); bundle.test.ts runs the real bundles.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { STAGE_SETTINGS, STAGES, stackName, type Stage } from '../../infra/stages.ts';
import { errorStatuses, type ErrorCode } from '../../lib/errors.ts';
import { API_STAGE_NAME, resourcePaths, routes, type OperationName } from '../../lib/routes.ts';
import { controlTable, petsTable } from '../../lib/table.ts';
import { synthesize, testApp, type Resources, type SynthesizedStack } from './synth.ts';

const synthesized = new Map<Stage, SynthesizedStack>();

beforeAll(() => {
  const { stacks } = testApp();
  for (const [stage, stack] of stacks) synthesized.set(stage, synthesize(stack));
});

const of = (stage: Stage): SynthesizedStack => {
  const found = synthesized.get(stage);
  if (!found) throw new Error(`${stage} was not synthesized`);
  return found;
};

// --- Helpers reading CloudFormation -----------------------------------------------------------

type Json = unknown;
const ref = (logicalId: string) => ({ Ref: logicalId });
const getAtt = (logicalId: string, attribute: string) => ({ 'Fn::GetAtt': [logicalId, attribute] });
const props = (resource: Resources[string]) => resource.Properties ?? {};

/** The API path of a method's or resource's ResourceId/ParentId reference. */
function apiPath(resourceRef: Json, resources: Resources): string {
  const getAttr = (resourceRef as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
  if (getAttr?.[1] === 'RootResourceId') return '/';
  const id = (resourceRef as { Ref: string }).Ref;
  const resource = resources[id];
  if (resource?.Type !== 'AWS::ApiGateway::Resource') throw new Error(`not an API resource: ${JSON.stringify(resourceRef)}`);
  const parent = apiPath(props(resource).ParentId, resources);
  return `${parent === '/' ? '' : parent}/${String(props(resource).PathPart)}`;
}

interface ApiMethod {
  logicalId: string;
  httpMethod: string;
  path: string;
  properties: Record<string, any>;
}

function apiMethods(s: SynthesizedStack): ApiMethod[] {
  return s.ofType('AWS::ApiGateway::Method').map(([logicalId, method]) => ({
    logicalId,
    httpMethod: String(props(method).HttpMethod),
    path: apiPath(props(method).ResourceId, s.json.Resources),
    properties: props(method) as Record<string, any>,
  }));
}

function functionOf(s: SynthesizedStack, operation: OperationName) {
  const fn = s.stack.functions.get(operation);
  if (!fn) throw new Error(`no function for ${operation}`);
  const logicalId = s.logicalId(fn);
  return { logicalId, properties: props(s.resource(logicalId)) as Record<string, any> };
}

/** Every string in a JSON value (to look for wildcards anywhere in it). */
function strings(value: Json): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}

const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** Fn::Join with every Ref replaced by `refs[id]` (or `<id>`), for checking rendered strings. */
function render(value: Json, refs: Record<string, string>): string {
  if (typeof value === 'string') return value;
  const object = value as Record<string, any>;
  if (object.Ref) return refs[object.Ref] ?? `<${object.Ref}>`;
  if (object['Fn::Join']) return (object['Fn::Join'][1] as Json[]).map((part) => render(part, refs)).join(object['Fn::Join'][0]);
  if (object['Fn::GetAtt']) return `<${object['Fn::GetAtt'].join('.')}>`;
  throw new Error(`cannot render ${JSON.stringify(value)}`);
}

const parseErrorBody = (template: string): { code: ErrorCode; message: string; status: number } =>
  // Mock templates are VTL: `$context.httpMethod` sits inside a JSON string, so the text parses as it is.
  JSON.parse(template) as { code: ErrorCode; message: string; status: number };

// --- Tests -----------------------------------------------------------------------------------

describe.each(STAGES)('PetStore-%s', (stage) => {
  const settings = STAGE_SETTINGS[stage];
  const production = stage === 'production';

  describe('table', () => {
    it('is the shared definition from lib/table.ts', () => {
      const { partitionKey, statusIndex } = petsTable;
      of(stage).template.resourceCountIs('AWS::DynamoDB::Table', 2);
      of(stage).template.hasResourceProperties('AWS::DynamoDB::Table', {
        KeySchema: [{ AttributeName: partitionKey.name, KeyType: 'HASH' }],
        AttributeDefinitions: Match.arrayWith([
          { AttributeName: partitionKey.name, AttributeType: partitionKey.type },
          { AttributeName: statusIndex.partitionKey.name, AttributeType: statusIndex.partitionKey.type },
        ]),
        GlobalSecondaryIndexes: [
          {
            IndexName: statusIndex.indexName,
            KeySchema: [
              { AttributeName: statusIndex.partitionKey.name, KeyType: 'HASH' },
              { AttributeName: statusIndex.sortKey.name, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: statusIndex.projection },
          },
        ],
      });
      const table = of(stage).resource(of(stage).logicalId(of(stage).stack.table));
      expect((props(table).AttributeDefinitions as unknown[]).length).toBe(2);
    });

    it('is on-demand, with point-in-time recovery and encryption at rest', () => {
      of(stage).template.hasResourceProperties('AWS::DynamoDB::Table', {
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
      });
    });

    it('has a control table: string keys, TTL, on-demand, PITR, encrypted, protected like the pets table', () => {
      const s = of(stage);
      const control = s.resource(s.logicalId(s.stack.controlTable));
      expect(props(control)).toMatchObject({
        KeySchema: [
          { AttributeName: controlTable.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: controlTable.sortKey.name, KeyType: 'RANGE' },
        ],
        TimeToLiveSpecification: { AttributeName: controlTable.timeToLiveAttribute, Enabled: true },
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        DeletionProtectionEnabled: production,
      });
      expect(control.DeletionPolicy).toBe(production ? 'Retain' : 'Delete');
      expect((s.json.Outputs ?? {}).ControlTableName!.Value).toEqual(ref(s.logicalId(s.stack.controlTable)));
    });

    it(production ? 'is protected and retained' : 'can be destroyed', () => {
      of(stage).template.hasResource('AWS::DynamoDB::Table', {
        DeletionPolicy: production ? 'Retain' : 'Delete',
        UpdateReplacePolicy: production ? 'Retain' : 'Delete',
        Properties: Match.objectLike({ DeletionProtectionEnabled: production }),
      });
      expect(of(stage).stack.terminationProtection).toBe(production);
    });
  });

  it('keeps keys and the cursor secret in its control table, under a fixed name: no Secrets Manager, no SSM', () => {
    of(stage).template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    of(stage).template.resourceCountIs('AWS::SSM::Parameter', 0);
    expect(props(of(stage).resource(of(stage).logicalId(of(stage).stack.controlTable))).TableName).toBe(`petstore-${stage}-control`);
  });

  describe('functions', () => {
    it('has one function per route, and nothing else', () => {
      of(stage).template.resourceCountIs('AWS::Lambda::Function', routes.length);
      expect([...of(stage).stack.functions.keys()]).toEqual(routes.map((r) => r.operation));
    });

    it.each(routes.map((r) => [r.operation] as const))('%s: runtime, architecture, handler, limits, tracing, logs', (operation) => {
      const s = of(stage);
      const { properties } = functionOf(s, operation);
      expect(properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        MemorySize: settings.functionMemoryMiB,
        Timeout: settings.functionTimeout.toSeconds(),
        TracingConfig: { Mode: 'Active' },
      });
      const logGroup = s.resource((properties.LoggingConfig.LogGroup as { Ref: string }).Ref);
      expect(logGroup.Type).toBe('AWS::Logs::LogGroup');
      expect(props(logGroup).RetentionInDays).toBe(settings.logRetention);
    });

    it.each(routes.map((r) => [r.operation] as const))('%s: environment', (operation) => {
      const s = of(stage);
      const tableId = s.logicalId(s.stack.table);
      // No NODE_OPTIONS: --enable-source-maps cost about 0.2x of the import on every cold start.
      const expected: Record<string, Json> = { TABLE_NAME: ref(tableId), CONTROL_TABLE_NAME: ref(s.logicalId(s.stack.controlTable)) };
      expect(functionOf(s, operation).properties.Environment).toEqual({ Variables: expected });
    });
  });

  describe('IAM', () => {
    function roleOf(s: SynthesizedStack, operation: OperationName) {
      const { properties } = functionOf(s, operation);
      const roleId = (properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      return { roleId, role: props(s.resource(roleId)) as Record<string, any>, fn: properties };
    }

    /** Statements as comparable {actions, resource} pairs (one per resource). */
    function grants(statements: Record<string, any>[]) {
      return statements
        .flatMap((statement) => {
          expect(statement.Effect).toBe('Allow');
          expect(statement.NotAction ?? statement.NotResource).toBeUndefined();
          return asArray(statement.Resource).map((resource) => ({
            actions: asArray(statement.Action as string | string[]).sort(),
            resource: resource as Json,
            condition: (statement.Condition ?? null) as Json,
          }));
        })
        .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    }

    it.each(routes.map((r) => [r.operation] as const))('%s: exactly what its route needs', (operation) => {
      const s = of(stage);
      const { role, fn } = roleOf(s, operation);
      const tableId = s.logicalId(s.stack.table);
      const table = getAtt(tableId, 'Arn');
      const control = getAtt(s.logicalId(s.stack.controlTable), 'Arn');
      // Each control-table grant is held to its partitions: the keys, the cursor secret, idempotency records.
      const partition = (pk: string) => ({ 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [pk] } });
      const statusIndex = { 'Fn::Join': ['', [table, `/index/${petsTable.statusIndex.indexName}`]] };
      const logs = getAtt((fn.LoggingConfig.LogGroup as { Ref: string }).Ref, 'Arn');
      const common = [
        { actions: ['dynamodb:Query'], resource: control, condition: partition('apikeys') },
        { actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resource: logs },
      ];
      const expected = {
        listPets: [
          { actions: ['dynamodb:Query'], resource: statusIndex },
          { actions: ['dynamodb:Scan'], resource: table },
          { actions: ['dynamodb:GetItem', 'dynamodb:PutItem'], resource: control, condition: partition('cursor-secret') },
        ],
        createPet: [
          { actions: ['dynamodb:GetItem', 'dynamodb:PutItem'], resource: table },
          {
            actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
            resource: control,
            condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['idempotency#*'] } },
          },
        ],
        getPet: [{ actions: ['dynamodb:GetItem'], resource: table }],
      }[operation];

      const statements = (role.Policies as { PolicyDocument: { Statement: Record<string, any>[] } }[]).flatMap(
        (policy) => policy.PolicyDocument.Statement,
      );
      expect(grants(statements)).toEqual(grants([...expected, ...common].map((g) => ({ Effect: 'Allow', Action: g.actions, Resource: g.resource, Condition: 'condition' in g ? g.condition : undefined }))));
      // X-Ray's write actions accept no resource but "*": they come only from AWS's write-only policy.
      expect(role.ManagedPolicyArns).toEqual([
        { 'Fn::Join': ['', ['arn:', ref('AWS::Partition'), ':iam::aws:policy/AWSXRayDaemonWriteAccess']] },
      ]);
      expect(role.AssumeRolePolicyDocument.Statement).toEqual([
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
      ]);
    });

    it('has no "*" action or resource in any function policy, and no policy outside the roles', () => {
      const s = of(stage);
      const roleIds = routes.map((route) => roleOf(s, route.operation).roleId);
      const documents = roleIds.flatMap((roleId) =>
        (props(s.resource(roleId)).Policies as { PolicyDocument: { Statement: Record<string, any>[] } }[]).map((p) => p.PolicyDocument),
      );
      const attached = s
        .ofType('AWS::IAM::Policy')
        .filter(([, policy]) => strings(props(policy).Roles).some((id) => roleIds.includes(id)));
      expect(attached).toEqual([]);
      const statements = documents.flatMap((document) => document.Statement);
      expect(statements.length).toBeGreaterThan(0);
      for (const statement of statements) {
        for (const action of strings(statement.Action)) expect(action).not.toContain('*');
        for (const resource of strings(statement.Resource)) expect(resource).not.toContain('*');
      }
    });
  });

  describe('API', () => {
    it('is one regional REST API on stage v1, throttled, traced and access-logged as JSON', () => {
      const s = of(stage);
      s.template.resourceCountIs('AWS::ApiGateway::RestApi', 1);
      s.template.resourceCountIs('AWS::ApiGateway::Stage', 1);
      const [, apiStage] = s.ofType('AWS::ApiGateway::Stage')[0]!;
      const properties = props(apiStage) as Record<string, any>;
      expect(properties.StageName).toBe(API_STAGE_NAME);
      expect(properties.StageName).toBe('v1');
      expect(properties.TracingEnabled).toBe(true);
      expect(properties.MethodSettings).toEqual([
        expect.objectContaining({
          HttpMethod: '*',
          ResourcePath: '/*',
          ThrottlingRateLimit: settings.throttling.rateLimit,
          ThrottlingBurstLimit: settings.throttling.burstLimit,
          LoggingLevel: 'ERROR',
          DataTraceEnabled: false,
        }),
      ]);
      // `$context.error.messageString` is a quoted JSON string once API Gateway fills it in.
      const format = String(properties.AccessLogSetting.Format).replace('$context.error.messageString', '"message"');
      expect(JSON.parse(format)).toMatchObject({
        requestId: '$context.requestId',
        httpMethod: '$context.httpMethod',
        resourcePath: '$context.resourcePath',
        status: '$context.status',
        errorMessage: 'message',
      });
      const destination = render(properties.AccessLogSetting.DestinationArn, {});
      const accessLogId = /:log-group:<(\w+)>$/.exec(destination)?.[1];
      expect(accessLogId).toBeDefined();
      expect(props(s.resource(accessLogId!)).RetentionInDays).toBe(settings.logRetention);
      s.template.hasResourceProperties('AWS::ApiGateway::RestApi', {
        EndpointConfiguration: { Types: ['REGIONAL'] },
      });
    });

    it('proxies exactly the routes to Lambda, each to its own function, named after its operation', () => {
      const s = of(stage);
      const proxied = apiMethods(s).filter((m) => m.properties.Integration?.Type === 'AWS_PROXY');
      expect(new Set(proxied.map((m) => `${m.httpMethod} ${m.path}`))).toEqual(new Set(routes.map((r) => `${r.method} ${r.path}`)));
      expect(proxied).toHaveLength(routes.length);
      for (const route of routes) {
        const method = proxied.find((m) => m.httpMethod === route.method && m.path === route.path)!;
        expect(method.properties.OperationName).toBe(route.operation);
        expect(method.properties.AuthorizationType).toBe('NONE');
        expect(method.properties.Integration.IntegrationHttpMethod).toBe('POST');
        const { logicalId } = functionOf(s, route.operation);
        expect(strings(method.properties.Integration.Uri)).toContain(logicalId);
        const others = routes.filter((r) => r !== route).map((r) => functionOf(s, r.operation).logicalId);
        for (const other of others) expect(strings(method.properties.Integration.Uri)).not.toContain(other);
      }
      // Only API Gateway, only for that method and path, may invoke each function.
      const permissions = s.ofType('AWS::Lambda::Permission');
      expect(permissions).toHaveLength(routes.length);
      for (const [, permission] of permissions) {
        expect(props(permission).Principal).toBe('apigateway.amazonaws.com');
        expect(render(props(permission).SourceArn, {})).toMatch(/:execute-api:.*\/<\w+>\/(GET|POST)\/pets/);
      }
    });

    it('answers another method on a known path with a 405 mock listing the allowed methods', () => {
      const s = of(stage);
      const paths = resourcePaths(routes);
      const mocks = apiMethods(s).filter((m) => m.properties.Integration?.Type === 'MOCK' && m.path !== '/' && m.path !== '/{proxy+}');
      expect(new Set(mocks.map((m) => `${m.httpMethod} ${m.path}`))).toEqual(new Set([...paths.keys()].map((p) => `ANY ${p}`)));
      for (const mock of mocks) {
        const allow = paths.get(mock.path)!;
        const { Integration, MethodResponses, AuthorizationType } = mock.properties;
        expect(AuthorizationType).toBe('NONE');
        expect(JSON.parse(Integration.RequestTemplates['application/json'])).toEqual({ statusCode: 405 });
        expect(Integration.PassthroughBehavior).toBe('NEVER');
        expect(Integration.IntegrationResponses).toHaveLength(1);
        const [response] = Integration.IntegrationResponses;
        expect(response.StatusCode).toBe('405');
        expect(response.ResponseParameters).toEqual({
          'method.response.header.Allow': `'${allow.join(', ')}'`,
          'method.response.header.Content-Type': "'application/json'",
        });
        const body = parseErrorBody(response.ResponseTemplates['application/json']);
        expect(body).toEqual({ code: 'METHOD_NOT_ALLOWED', status: errorStatuses.METHOD_NOT_ALLOWED, message: expect.any(String) });
        expect(body.status).toBe(405);
        expect(body.message).toContain('$context.httpMethod');
        expect(MethodResponses).toEqual([
          {
            StatusCode: '405',
            ResponseParameters: { 'method.response.header.Allow': true, 'method.response.header.Content-Type': true },
          },
        ]);
      }
    });

    it('answers an unknown path with a 404 mock: the root and a greedy {proxy+} below it', () => {
      const s = of(stage);
      const mocks = apiMethods(s).filter((m) => m.path === '/' || m.path === '/{proxy+}');
      expect(mocks.map((m) => `${m.httpMethod} ${m.path}`).sort()).toEqual(['ANY /', 'ANY /{proxy+}']);
      for (const mock of mocks) {
        const { Integration, MethodResponses, AuthorizationType } = mock.properties;
        expect(Integration.Type).toBe('MOCK');
        expect(AuthorizationType).toBe('NONE');
        expect(JSON.parse(Integration.RequestTemplates['application/json'])).toEqual({ statusCode: 404 });
        const [response] = Integration.IntegrationResponses;
        expect(response.StatusCode).toBe('404');
        expect(response.ResponseParameters).toEqual({ 'method.response.header.Content-Type': "'application/json'" });
        expect(parseErrorBody(response.ResponseTemplates['application/json'])).toEqual({
          code: 'NOT_FOUND',
          status: errorStatuses.NOT_FOUND,
          message: expect.any(String),
        });
        expect(MethodResponses).toEqual([{ StatusCode: '404', ResponseParameters: { 'method.response.header.Content-Type': true } }]);
      }
    });

    it("answers the gateway's own errors with the Error body, codes and statuses from lib/errors.ts", () => {
      const s = of(stage);
      const responses = new Map(
        s.ofType('AWS::ApiGateway::GatewayResponse').map(([, r]) => [String(props(r).ResponseType), props(r) as Record<string, any>]),
      );
      const required: Record<string, ErrorCode> = {
        MISSING_AUTHENTICATION_TOKEN: 'NOT_FOUND',
        THROTTLED: 'TOO_MANY_REQUESTS',
        QUOTA_EXCEEDED: 'TOO_MANY_REQUESTS',
        REQUEST_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
        INTEGRATION_FAILURE: 'BAD_GATEWAY',
        INTEGRATION_TIMEOUT: 'GATEWAY_TIMEOUT',
        UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
        DEFAULT_4XX: 'FORBIDDEN',
        DEFAULT_5XX: 'INTERNAL',
      };
      for (const [type, code] of Object.entries(required)) {
        expect(responses.has(type), type).toBe(true);
        expect(parseErrorBody(responses.get(type)!.ResponseTemplates['application/json']).code, type).toBe(code);
      }
      for (const [type, response] of responses) {
        const templates = response.ResponseTemplates as Record<string, string>;
        expect(Object.keys(templates), type).toEqual(['application/json']);
        const body = parseErrorBody(templates['application/json']!);
        expect(Object.keys(body).sort(), type).toEqual(['code', 'message', 'status']);
        expect(Object.keys(errorStatuses), type).toContain(body.code);
        expect(body.status, type).toBe(errorStatuses[body.code]);
        expect(response.StatusCode, type).toBe(String(body.status));
        expect(body.message.length, type).toBeGreaterThan(10);
        expect(response.ResponseParameters['gatewayresponse.header.Content-Type'], type).toBe("'application/json'");
      }
      expect(Number(responses.get('DEFAULT_4XX')!.StatusCode)).toBeGreaterThanOrEqual(400);
      expect(Number(responses.get('DEFAULT_4XX')!.StatusCode)).toBeLessThan(500);
      expect(Number(responses.get('DEFAULT_5XX')!.StatusCode)).toBeGreaterThanOrEqual(500);
      expect(responses.get('THROTTLED')!.ResponseParameters['gatewayresponse.header.Retry-After']).toBe("'1'");
    });

    it('marks GET /pets/{petId} deprecated in its documentation, and only that method', () => {
      const s = of(stage);
      const parts = s.ofType('AWS::ApiGateway::DocumentationPart').map(([, part]) => props(part) as Record<string, any>);
      for (const route of routes) {
        const part = parts.find((p) => p.Location.Type === 'METHOD' && p.Location.Path === route.path && p.Location.Method === route.method);
        expect(part, route.operation).toBeDefined();
        const documented = JSON.parse(part!.Properties as string) as Record<string, unknown>;
        expect(documented.operationId).toBe(route.operation);
        expect(documented.deprecated === true).toBe(route.deprecated !== undefined);
      }
      const deprecated = parts.filter((p) => JSON.parse(p.Properties as string).deprecated === true);
      expect(deprecated.map((p) => `${p.Location.Method} ${p.Location.Path}`)).toEqual(['GET /pets/{petId}']);
    });
  });

  it('outputs the API URL (ending in /v1/) and the table name', () => {
    const s = of(stage);
    const outputs = s.json.Outputs ?? {};
    const [stageId, apiStage] = s.ofType('AWS::ApiGateway::Stage')[0]!;
    const tableId = s.logicalId(s.stack.table);
    const url = render(outputs.ApiUrl!.Value, { [stageId]: String(props(apiStage).StageName) });
    expect(url).toMatch(/^https:\/\/<\w+>\.execute-api\.<AWS::Region>\.<AWS::URLSuffix>\/v1\/$/);
    expect(outputs.TableName!.Value).toEqual(ref(tableId));
    for (const output of Object.values(outputs)) expect(output).not.toHaveProperty('Export');
  });
});

describe('the two stages', () => {
  it('are two self-contained stacks: staging never references production', () => {
    expect(STAGES.map((stage) => of(stage).stack.stackName)).toEqual(['PetStore-staging', 'PetStore-production']);
    expect(STAGES.map(stackName)).toEqual(['PetStore-staging', 'PetStore-production']);
    for (const stage of STAGES) {
      const text = JSON.stringify(of(stage).json);
      expect(text).not.toContain('Fn::ImportValue');
      const other = stage === 'staging' ? 'production' : 'staging';
      expect(text).not.toContain(`/petstore/${other}/`);
      expect(text).not.toContain(stackName(other));
    }
  });
});
