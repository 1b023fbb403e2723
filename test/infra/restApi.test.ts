/** The REST API, its mocks, gateway answers and documentation (infra/constructs/restApi.ts). */
import { describe, expect, it } from 'vitest';
import { STAGE_SETTINGS, STAGES } from '../../infra/stages.ts';
import { errorStatuses, type ErrorCode } from '../../lib/domain/errors.ts';
import { API_STAGE_NAME, resourcePaths, routes } from '../../lib/domain/routes.ts';
import { apiMethods, functionOf, ref, parseErrorBody, props, render, strings, synthesizedStages } from './templates.ts';

const of = synthesizedStages();

describe.each(STAGES)('PetStore-%s REST API', (stage) => {
  const settings = STAGE_SETTINGS[stage];

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
        // The key's id the authorizer names (lib/http/authorizer.ts): a throttled or refused request tied to its key.
        principalId: '$context.authorizer.principalId',
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

    it("declares API Gateway's execution log group, by the name API Gateway writes to, with the stage's retention, before the stage", () => {
      const s = of(stage);
      const groupId = s.logicalId(s.stack.restApi.executionLogs);
      const group = s.resource(groupId);
      expect(props(group)).toMatchObject({
        LogGroupName: {
          'Fn::Join': ['', ['API-Gateway-Execution-Logs_', ref(s.logicalId(s.stack.api)), `/${API_STAGE_NAME}`]],
        },
        RetentionInDays: settings.logRetention,
      });
      // Kept or deleted with the stack as the stage's other logs are.
      const accessLogs = s.resource(s.logicalId(s.stack.restApi.accessLogs));
      expect(group.DeletionPolicy).toBe(accessLogs.DeletionPolicy);
      expect(group.DeletionPolicy).toBe(settings.protectData ? 'Retain' : 'Delete');
      // Created before the stage, so API Gateway never creates it first (without retention).
      const [, apiStage] = s.ofType('AWS::ApiGateway::Stage')[0]!;
      expect(apiStage.DependsOn).toContain(groupId);
    });

    it('accepts TLS 1.2 at least on its execute-api endpoint, the only endpoint that carries keys', () => {
      const s = of(stage);
      const [, api] = s.ofType('AWS::ApiGateway::RestApi')[0]!;
      const { SecurityPolicy, EndpointAccessMode } = props(api) as Record<string, string | undefined>;
      // Unset means TLS_1_0 for a Regional API; TLS_1_0 takes TLS 1.0 and 1.1 too. Every other Regional
      // policy starts at TLS 1.2: the legacy TLS_1_2, and the enhanced SecurityPolicy_TLS13_1_2_* and
      // SecurityPolicy_TLS13_1_3_* ones, which API Gateway refuses without an endpoint access mode.
      expect(SecurityPolicy).toMatch(/^(TLS_1_2|SecurityPolicy_TLS13_1_[23]_\w+)$/);
      if (SecurityPolicy!.startsWith('SecurityPolicy_')) expect(EndpointAccessMode).toBe('STRICT');
      // No custom domain: no second endpoint with a policy of its own.
      s.template.resourceCountIs('AWS::ApiGateway::DomainName', 0);
      s.template.resourceCountIs('AWS::ApiGateway::DomainNameV2', 0);
      expect(props(api).DisableExecuteApiEndpoint).not.toBe(true);
    });

    it("proxies exactly the routes to Lambda, each to its own function's live alias, named after its operation", () => {
      const s = of(stage);
      const proxied = apiMethods(s).filter((m) => m.properties.Integration?.Type === 'AWS_PROXY');
      expect(new Set(proxied.map((m) => `${m.httpMethod} ${m.path}`))).toEqual(
        new Set(routes.map((r) => `${r.method} ${r.path}`)),
      );
      expect(proxied).toHaveLength(routes.length);
      for (const route of routes) {
        const method = proxied.find((m) => m.httpMethod === route.method && m.path === route.path)!;
        expect(method.properties.OperationName).toBe(route.operation);
        // The key authorizer's (test/infra/authorizer.test.ts).
        expect(method.properties.AuthorizationType).toBe('CUSTOM');
        expect(method.properties.Integration.IntegrationHttpMethod).toBe('POST');
        const aliasId = s.logicalId(s.stack.deployment.alias(route.operation));
        expect(strings(method.properties.Integration.Uri)).toContain(aliasId);
        const alias = props(s.resource(aliasId)) as Record<string, any>;
        expect(alias.Name).toBe('live');
        expect(alias.FunctionName).toEqual(ref(functionOf(s, route.operation).logicalId));
        const others = routes.filter((r) => r !== route).map((r) => s.logicalId(s.stack.deployment.alias(r.operation)));
        for (const other of others) expect(strings(method.properties.Integration.Uri)).not.toContain(other);
      }
      // Only API Gateway, only for that method and path, may invoke each function.
      const permissions = s
        .ofType('AWS::Lambda::Permission')
        .filter(
          ([, permission]) =>
            !strings(props(permission).FunctionName).includes(s.logicalId(s.stack.deployment.alias('authorizer'))),
        );
      expect(permissions).toHaveLength(routes.length);
      for (const [, permission] of permissions) {
        expect(props(permission).Principal).toBe('apigateway.amazonaws.com');
        expect(s.resource((props(permission).FunctionName as { Ref: string }).Ref).Type).toBe('AWS::Lambda::Alias');
        expect(render(props(permission).SourceArn, {})).toMatch(/:execute-api:.*\/<\w+>\/(GET|POST)\/pets/);
      }
    });

    it('answers another method on a known path with a 405 mock listing the allowed methods', () => {
      const s = of(stage);
      const paths = resourcePaths(routes);
      const mocks = apiMethods(s).filter(
        (m) => m.properties.Integration?.Type === 'MOCK' && m.path !== '/' && m.path !== '/{proxy+}',
      );
      expect(new Set(mocks.map((m) => `${m.httpMethod} ${m.path}`))).toEqual(
        new Set([...paths.keys()].map((p) => `ANY ${p}`)),
      );
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
          'method.response.header.X-Request-Id': 'context.requestId',
          'method.response.header.Cache-Control': "'no-store'",
          'method.response.header.X-Content-Type-Options': "'nosniff'",
        });
        const body = parseErrorBody(response.ResponseTemplates['application/json']);
        expect(body).toEqual({
          code: 'METHOD_NOT_ALLOWED',
          status: errorStatuses.METHOD_NOT_ALLOWED,
          message: expect.any(String),
        });
        expect(body.status).toBe(405);
        expect(body.message).toContain('$context.httpMethod');
        expect(MethodResponses).toEqual([
          {
            StatusCode: '405',
            ResponseParameters: {
              'method.response.header.Allow': true,
              'method.response.header.Content-Type': true,
              'method.response.header.X-Request-Id': true,
              'method.response.header.Cache-Control': true,
              'method.response.header.X-Content-Type-Options': true,
            },
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
        expect(response.ResponseParameters).toEqual({
          'method.response.header.Content-Type': "'application/json'",
          'method.response.header.X-Request-Id': 'context.requestId',
          'method.response.header.Cache-Control': "'no-store'",
          'method.response.header.X-Content-Type-Options': "'nosniff'",
        });
        expect(parseErrorBody(response.ResponseTemplates['application/json'])).toEqual({
          code: 'NOT_FOUND',
          status: errorStatuses.NOT_FOUND,
          message: expect.any(String),
        });
        expect(MethodResponses).toEqual([
          {
            StatusCode: '404',
            ResponseParameters: {
              'method.response.header.Content-Type': true,
              'method.response.header.X-Request-Id': true,
              'method.response.header.Cache-Control': true,
              'method.response.header.X-Content-Type-Options': true,
            },
          },
        ]);
      }
    });

    it("answers the gateway's own errors with the Error body, codes and statuses from lib/domain/errors.ts", () => {
      const s = of(stage);
      const responses = new Map(
        s
          .ofType('AWS::ApiGateway::GatewayResponse')
          .map(([, r]) => [String(props(r).ResponseType), props(r) as Record<string, any>]),
      );
      const required: Record<string, ErrorCode> = {
        MISSING_AUTHENTICATION_TOKEN: 'NOT_FOUND',
        THROTTLED: 'TOO_MANY_REQUESTS',
        QUOTA_EXCEEDED: 'TOO_MANY_REQUESTS',
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
        const fields = body.status >= 500 ? ['code', 'message', 'requestId', 'status'] : ['code', 'message', 'status'];
        expect(Object.keys(body).sort(), type).toEqual(fields);
        if (body.status >= 500) expect((body as { requestId?: string }).requestId, type).toBe('$context.requestId');
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
      const parts = s
        .ofType('AWS::ApiGateway::DocumentationPart')
        .map(([, part]) => props(part) as Record<string, any>);
      for (const route of routes) {
        const part = parts.find(
          (p) => p.Location.Type === 'METHOD' && p.Location.Path === route.path && p.Location.Method === route.method,
        );
        expect(part, route.operation).toBeDefined();
        const documented = JSON.parse(part!.Properties as string) as Record<string, unknown>;
        expect(documented.operationId).toBe(route.operation);
        expect(documented.deprecated === true).toBe(route.deprecated !== undefined);
      }
      const deprecated = parts.filter((p) => JSON.parse(p.Properties as string).deprecated === true);
      expect(deprecated.map((p) => `${p.Location.Method} ${p.Location.Path}`)).toEqual(['GET /pets/{petId}']);
    });
  });
});
