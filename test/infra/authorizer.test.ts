/**
 * Keyless traffic and per-key limits (infra/constructs/authorizer.ts, the bearer-key rule of
 * infra/constructs/firewall.ts): the authorizer on every method that runs a function, its cache, its
 * least-privilege role, the usage plan per stage with the API's key source AUTHORIZER, and in
 * production the web ACL rule that refuses a malformed Authorization before anything runs.
 */
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { describe, expect, it } from 'vitest';
import { BEARER_KEY_RULE, bearerKeyPattern } from '../../infra/constructs/firewall.ts';
import { BEARER_CHALLENGE } from '../../infra/gatewayErrors.ts';
import { USAGE_PLAN_OUTPUT } from '../../infra/names.ts';
import { AUTHORIZER_CACHE_TTL_SECONDS, STAGE_SETTINGS, STAGES } from '../../infra/stages.ts';
import { controlKeys } from '../../lib/store/table.ts';
import { generateApiKey } from '../../tools/keys/keys.ts';
import { apiMethods, getAtt, props, ref, strings, synthesizedStages } from './templates.ts';
import { authorizationRules } from './wafModel.ts';

const of = synthesizedStages();

describe.each(STAGES)('PetStore-%s key authorizer and usage plan', (stage) => {
  const settings = STAGE_SETTINGS[stage];
  const authorizerId = () => of(stage).logicalId(of(stage).stack.keyAuthorizer.authorizer);

  it('runs the cached REQUEST authorizer, keyed by the Authorization header, on every method that invokes a function', () => {
    const s = of(stage);
    const authorizer = props(s.resource(authorizerId()));
    expect(authorizer).toMatchObject({
      Type: 'REQUEST',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: AUTHORIZER_CACHE_TTL_SECONDS,
    });
    // Its `live` alias, moved by canary as the operations' are (test/infra/deployment.test.ts); API Gateway may invoke only that.
    const aliasId = s.logicalId(s.stack.deployment.alias('authorizer'));
    expect(strings(authorizer.AuthorizerUri)).toContain(aliasId);
    expect(strings(authorizer.AuthorizerUri)).not.toContain(s.logicalId(s.stack.keyAuthorizer.fn));
    const invokers = s
      .ofType('AWS::Lambda::Permission')
      .filter(([, permission]) => strings(props(permission).SourceArn).some((part) => part.includes('/authorizers/')));
    expect(invokers.map(([, permission]) => props(permission))).toEqual([
      expect.objectContaining({
        Action: 'lambda:InvokeFunction',
        Principal: 'apigateway.amazonaws.com',
        FunctionName: ref(aliasId),
      }),
    ]);
    const methods = apiMethods(s);
    const proxied = methods.filter((m) => m.properties.Integration?.Type === 'AWS_PROXY');
    expect(proxied.length).toBeGreaterThan(0);
    for (const method of proxied) {
      expect(method.properties).toMatchObject({
        AuthorizationType: 'CUSTOM',
        AuthorizerId: ref(authorizerId()),
        ApiKeyRequired: true,
      });
    }
    // Whatever has no authorizer runs no code: API Gateway's own mocks (404, 405, CORS preflights).
    for (const method of methods.filter((m) => m.properties.AuthorizationType !== 'CUSTOM')) {
      expect(method.properties.Integration.Type).toBe('MOCK');
    }
  });

  it('takes API keys from the authorizer, never from an x-api-key header', () => {
    of(stage).template.hasResourceProperties('AWS::ApiGateway::RestApi', { ApiKeySourceType: 'AUTHORIZER' });
  });

  it("gives each key the stage's throttle and daily quota in one usage plan on the stage, whose id the stack outputs", () => {
    const s = of(stage);
    const plans = s.ofType('AWS::ApiGateway::UsagePlan');
    expect(plans).toHaveLength(1);
    const [planId, plan] = plans[0]!;
    const { rateLimit, burstLimit, requestsPerDay } = settings.keyLimits;
    expect(props(plan)).toMatchObject({
      Throttle: { RateLimit: rateLimit, BurstLimit: burstLimit },
      Quota: { Limit: requestsPerDay, Period: 'DAY' },
      ApiStages: [{ ApiId: ref(s.logicalId(s.stack.api)), Stage: ref(s.logicalId(s.stack.api.deploymentStage)) }],
    });
    // One key cannot take the whole stage.
    expect(rateLimit).toBeLessThan(settings.throttling.rateLimit);
    expect(burstLimit).toBeLessThan(settings.throttling.burstLimit);
    expect(s.json.Outputs?.[USAGE_PLAN_OUTPUT]?.Value).toEqual(ref(planId));
  });

  it('lets the authorizer read the API keys partition, record their last use, and write its logs, and nothing else: no pets table', () => {
    const s = of(stage);
    const fn = props(s.resource(s.logicalId(s.stack.keyAuthorizer.fn)));
    expect(Object.keys((fn.Environment as { Variables: object }).Variables)).toEqual(['CONTROL_TABLE_NAME']);
    const roleId = (fn.Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
    const role = props(s.resource(roleId)) as {
      Policies: { PolicyDocument: { Statement: Record<string, unknown>[] } }[];
    };
    const statements = role.Policies.flatMap((policy) => policy.PolicyDocument.Statement);
    expect(statements).toEqual([
      {
        Sid: 'ReadApiKeys',
        Effect: 'Allow',
        Action: 'dynamodb:Query',
        Resource: getAtt(s.logicalId(s.stack.controlTable), 'Arn'),
        Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [controlKeys.apiKeys] } },
      },
      {
        Sid: 'RecordKeyUse',
        Effect: 'Allow',
        Action: 'dynamodb:UpdateItem',
        Resource: getAtt(s.logicalId(s.stack.controlTable), 'Arn'),
        Condition: {
          'ForAllValues:StringEquals': {
            'dynamodb:LeadingKeys': [controlKeys.apiKeys],
            'dynamodb:Attributes': ['pk', 'sk', 'lastUsedAt'],
          },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
        },
      },
      {
        Sid: 'WriteLogs',
        Effect: 'Allow',
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: expect.anything(),
      },
    ]);
    expect(JSON.stringify(statements)).not.toContain(s.logicalId(s.stack.table));
  });

  it("lets the authorizer's UpdateItem write lastUsedAt of an API key item, as IAM evaluates it, and nothing else of it", async () => {
    const s = of(stage);
    const fn = props(s.resource(s.logicalId(s.stack.keyAuthorizer.fn)));
    const roleId = (fn.Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
    const role = props(s.resource(roleId)) as {
      Policies: { PolicyDocument: { Statement: Record<string, unknown>[] } }[];
    };
    const table = 'arn:aws:dynamodb:us-east-1:123456789012:table/PetStore-x-ControlTable-1';
    // The role's DynamoDB statements, the control table named as it will be (the log statement names a log group).
    const onTable = role.Policies.flatMap((policy) => policy.PolicyDocument.Statement).filter(
      (statement) => statement.Sid !== 'WriteLogs',
    );
    const statements = JSON.parse(
      JSON.stringify(onTable).replaceAll(
        JSON.stringify(getAtt(s.logicalId(s.stack.controlTable), 'Arn')),
        JSON.stringify(table),
      ),
    );
    const allowed = async (context: Record<string, string | string[]>) => {
      const request = {
        principal: 'arn:aws:sts::123456789012:assumed-role/authorizer/s',
        action: 'dynamodb:UpdateItem',
        resource: { resource: table, accountId: '123456789012' },
        contextVariables: context,
      };
      const identityPolicies = [{ name: 'authorizer', policy: { Version: '2012-10-17', Statement: statements } }];
      const result = await runSimulation(
        { request, identityPolicies, serviceControlPolicies: [], resourceControlPolicies: [] },
        {},
      );
      if (result.resultType === 'error') throw new Error(JSON.stringify(result.errors));
      return result.overallResult === 'Allowed';
    };
    // What KeyUses sends: the key item's keys, lastUsedAt, no ReturnValues.
    expect(
      await allowed({ 'dynamodb:LeadingKeys': ['apikeys'], 'dynamodb:Attributes': ['pk', 'sk', 'lastUsedAt'] }),
    ).toBe(true);
    expect(await allowed({ 'dynamodb:LeadingKeys': ['apikeys'], 'dynamodb:Attributes': ['pk', 'sk', 'sha256'] })).toBe(
      false,
    );
    expect(
      await allowed({ 'dynamodb:LeadingKeys': ['apikeys'], 'dynamodb:Attributes': ['pk', 'sk', 'expiresAt'] }),
    ).toBe(false);
    expect(
      await allowed({ 'dynamodb:LeadingKeys': ['cursor-secret'], 'dynamodb:Attributes': ['pk', 'sk', 'lastUsedAt'] }),
    ).toBe(false);
    expect(
      await allowed({
        'dynamodb:LeadingKeys': ['apikeys'],
        'dynamodb:Attributes': ['pk', 'sk', 'lastUsedAt'],
        'dynamodb:ReturnValues': 'ALL_OLD',
      }),
    ).toBe(false);
  });

  it("answers the authorizer's and the usage plan's refusals in the Error shape", () => {
    const s = of(stage);
    const responses = new Map(
      s
        .ofType('AWS::ApiGateway::GatewayResponse')
        .map(([, r]) => [String(props(r).ResponseType), props(r) as Record<string, any>]),
    );
    const expected = {
      UNAUTHORIZED: ['UNAUTHORIZED', 401],
      ACCESS_DENIED: ['FORBIDDEN', 403],
      AUTHORIZER_FAILURE: ['SERVICE_UNAVAILABLE', 503],
      AUTHORIZER_CONFIGURATION_ERROR: ['INTERNAL', 500],
      INVALID_API_KEY: ['FORBIDDEN', 403],
      QUOTA_EXCEEDED: ['TOO_MANY_REQUESTS', 429],
      THROTTLED: ['TOO_MANY_REQUESTS', 429],
    } as const;
    for (const [type, [code, status]] of Object.entries(expected)) {
      const response = responses.get(type);
      expect(response, type).toBeDefined();
      expect(response!.StatusCode).toBe(String(status));
      expect(JSON.parse(response!.ResponseTemplates['application/json'])).toMatchObject({ code, status });
    }
    expect(responses.get('UNAUTHORIZED')!.ResponseParameters['gatewayresponse.header.WWW-Authenticate']).toBe(
      `'${BEARER_CHALLENGE}'`,
    );
  });
});

describe('the web ACL refuses a malformed Authorization before anything runs', () => {
  const rule = () => {
    const [, acl] = of('production').ofType('AWS::WAFv2::WebACL')[0]!;
    const found = (props(acl).Rules as Record<string, any>[]).find((r) => r.Name === BEARER_KEY_RULE);
    return { acl: props(acl) as Record<string, any>, rule: found! };
  };

  it('blocks with 401, the bearer challenge and an Error body, whatever is not a well-formed bearer key (but CORS preflights)', () => {
    const { acl, rule: bearer } = rule();
    expect(bearer).toBeDefined();
    const [notKey, notPreflight] = bearer.Statement.AndStatement.Statements;
    expect(notKey.NotStatement.Statement.RegexMatchStatement).toEqual({
      FieldToMatch: { SingleHeader: { Name: 'authorization' } },
      RegexString: bearerKeyPattern(),
      TextTransformations: [
        { Priority: 0, Type: 'COMPRESS_WHITE_SPACE' },
        { Priority: 1, Type: 'LOWERCASE' },
      ],
    });
    expect(notPreflight.NotStatement.Statement.ByteMatchStatement).toMatchObject({
      SearchString: 'OPTIONS',
      PositionalConstraint: 'EXACTLY',
    });
    const response = bearer.Action.Block.CustomResponse;
    expect(response.ResponseCode).toBe(401);
    expect(response.ResponseHeaders).toEqual([
      { Name: 'WWW-Authenticate', Value: BEARER_CHALLENGE },
      { Name: 'Cache-Control', Value: 'no-store' },
      { Name: 'X-Content-Type-Options', Value: 'nosniff' },
    ]);
    const body = acl.CustomResponseBodies[response.CustomResponseBodyKey];
    expect(body.ContentType).toBe('APPLICATION_JSON');
    expect(JSON.parse(body.Content)).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
  });

  it('lets through exactly what `npm run keys` issues, as WAF sees it (blanks compressed, lowercased)', () => {
    const wafSees = (header: string) => authorizationRules(of('production')).passes(header);
    for (let i = 0; i < 50; i++) {
      const { key } = generateApiKey();
      expect(wafSees(`Bearer ${key}`)).toBe(true);
      expect(wafSees(`bearer  ${key}`)).toBe(true);
    }
    const { key } = generateApiKey();
    for (const refused of [
      '',
      'Bearer',
      `Basic ${key}`,
      `Bearer ${key}x`,
      `Bearer ${key.slice(0, -1)}`,
      `Bearer ${key.replace('psk_', 'pk_')}`,
      `Bearer ${key}, Bearer ${key}`,
      `Bearer ${key} `,
      key,
    ]) {
      expect(wafSees(refused), refused).toBe(false);
    }
  });

  it('has the same rule in staging, whose web ACL is on by default (webAcl in infra/stages.ts)', () => {
    const [, acl] = of('staging').ofType('AWS::WAFv2::WebACL')[0]!;
    const staging = (props(acl).Rules as Record<string, any>[]).find((r) => r.Name === BEARER_KEY_RULE);
    expect(staging).toEqual(rule().rule);
  });
});
