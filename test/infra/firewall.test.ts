/**
 * The web ACL (infra/constructs/firewall.ts) where the stage settings ask for one: its rules, its
 * answers in the Error shape, its association with the API stage, its metrics and alarm.
 */
import { describe, expect, it } from 'vitest';
import {
  BODY_INSPECTION_LIMIT,
  BEARER_KEY_RULE,
  COMMON_RULE_SET_BODY_LIMIT,
  COUNTED_COMMON_RULES,
  FIREWALL_RULES,
  KEY_RATE_WINDOW_SECONDS,
  RATE_LIMITED_RETRY_AFTER_SECONDS,
  RATE_WINDOW_SECONDS,
  blockedRequestsLogGroupPrefix,
} from '../../infra/constructs/firewall.ts';
import { STAGE_SETTINGS, STAGES } from '../../infra/stages.ts';
import { errorStatuses } from '../../lib/domain/errors.ts';
import { routes } from '../../lib/domain/routes.ts';
import { MAX_BODY_BYTES } from '../../lib/http/jsonBody.ts';
import { synthesize, testApp } from './synth.ts';
import { alarmNamed, parseErrorBody, props, ref, synthesizedStages } from './templates.ts';

const of = synthesizedStages();
/** AWS WAF's smallest rate-based limit. */
const WAF_MINIMUM_RATE_LIMIT = 10;

const withWebAcl = STAGES.filter((stage) => STAGE_SETTINGS[stage].webAcl);

describe('web ACL settings', () => {
  it('are on in every stage, staging included (a setting it can turn off)', () => {
    expect(withWebAcl).toEqual(['staging', 'production']);
  });

  it("derive staging's rates from its throttle and key plan as production's are from its own", () => {
    const rates = (stage: (typeof STAGES)[number]) => {
      const { webAcl, throttling, keyLimits } = STAGE_SETTINGS[stage];
      if (!webAcl) throw new Error(`${stage} has no web ACL`);
      return {
        perAddress: webAcl.requestsPerAddressPer5Minutes / ((throttling.rateLimit * RATE_WINDOW_SECONDS) / 10),
        perKey: webAcl.requestsPerKeyPerMinute / (keyLimits.rateLimit * KEY_RATE_WINDOW_SECONDS),
      };
    };
    expect(rates('staging')).toEqual(rates('production'));
  });

  it.each(withWebAcl)(
    'let no single address in %s take more than a tenth of the stage throttle over the window',
    (stage) => {
      const { webAcl, throttling } = STAGE_SETTINGS[stage];
      if (!webAcl) throw new Error('unreachable');
      expect(webAcl.requestsPerAddressPer5Minutes).toBeLessThanOrEqual(
        (throttling.rateLimit * RATE_WINDOW_SECONDS) / 10,
      );
      expect(webAcl.requestsPerAddressPer5Minutes).toBeGreaterThanOrEqual(WAF_MINIMUM_RATE_LIMIT);
    },
  );

  it.each(withWebAcl)(
    'in %s cap each key above its usage plan (a key within its plan is never blocked) and below the stage throttle',
    (stage) => {
      const { webAcl, throttling, keyLimits } = STAGE_SETTINGS[stage];
      if (!webAcl) throw new Error('unreachable');
      const window = KEY_RATE_WINDOW_SECONDS;
      expect(webAcl.requestsPerKeyPerMinute).toBeGreaterThanOrEqual(
        keyLimits.rateLimit * window + keyLimits.burstLimit,
      );
      expect(webAcl.requestsPerKeyPerMinute).toBeLessThan(throttling.rateLimit * window);
      expect(webAcl.requestsPerKeyPerMinute).toBeGreaterThanOrEqual(WAF_MINIMUM_RATE_LIMIT);
    },
  );
});

describe.each(withWebAcl)('PetStore-%s web ACL', (stage) => {
  const settings = STAGE_SETTINGS[stage];

  function webAcl() {
    const s = of(stage);
    s.template.resourceCountIs('AWS::WAFv2::WebACL', 1);
    const [id, acl] = s.ofType('AWS::WAFv2::WebACL')[0]!;
    return { s, id, properties: props(acl) as Record<string, any> };
  }

  it('is a regional web ACL that allows by default, associated with the API stage', () => {
    const { s, id, properties } = webAcl();
    expect(properties).toMatchObject({ Scope: 'REGIONAL', DefaultAction: { Allow: {} }, Name: `petstore-${stage}` });
    s.template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 1);
    const [, association] = s.ofType('AWS::WAFv2::WebACLAssociation')[0]!;
    const [apiId] = s.ofType('AWS::ApiGateway::RestApi')[0]!;
    const [stageId] = s.ofType('AWS::ApiGateway::Stage')[0]!;
    expect(props(association).WebACLArn).toEqual({ 'Fn::GetAtt': [id, 'Arn'] });
    const arn = JSON.stringify(props(association).ResourceArn);
    expect(arn).toContain(':apigateway:');
    expect(arn).toContain(JSON.stringify(ref(apiId)));
    expect(arn).toContain(`"/stages/",${JSON.stringify(ref(stageId))}`);
  });

  it('evaluates the rate limit per address first, then the body limits, the managed common, known-bad-inputs and IP-reputation groups, the bearer-key shape, and the rate limit per key', () => {
    const { properties } = webAcl();
    const rules = (properties.Rules as Record<string, any>[]).sort((a, b) => a.Priority - b.Priority);
    // The bearer-key rule: test/infra/authorizer.test.ts.
    expect(rules.map((rule) => rule.Name)).toEqual([
      FIREWALL_RULES.rateLimit,
      FIREWALL_RULES.bodyOnGet,
      FIREWALL_RULES.bodyTooLarge,
      FIREWALL_RULES.common,
      FIREWALL_RULES.knownBadInputs,
      FIREWALL_RULES.ipReputation,
      BEARER_KEY_RULE,
      FIREWALL_RULES.ratePerKey,
    ]);
    const [rate, , , common, badInputs, reputation] = rules;
    expect(rate!.Statement.RateBasedStatement).toEqual({
      Limit: settings.webAcl ? settings.webAcl.requestsPerAddressPer5Minutes : undefined,
      AggregateKeyType: 'IP',
      EvaluationWindowSec: RATE_WINDOW_SECONDS,
    });
    for (const [rule, name] of [
      [common, 'AWSManagedRulesCommonRuleSet'],
      [badInputs, 'AWSManagedRulesKnownBadInputsRuleSet'],
      [reputation, 'AWSManagedRulesAmazonIpReputationList'],
    ] as const) {
      // The group's own actions apply (None), so its blocks stay blocks.
      expect(rule!.OverrideAction, name).toEqual({ None: {} });
      expect(rule!.Statement.ManagedRuleGroupStatement, name).toMatchObject({ VendorName: 'AWS', Name: name });
    }
    expect(badInputs!.Statement.ManagedRuleGroupStatement).not.toHaveProperty('RuleActionOverrides');
    expect(reputation!.Statement.ManagedRuleGroupStatement).not.toHaveProperty('RuleActionOverrides');
  });

  it('caps each API key, counted by its Authorization header (blanks compressed, lower-cased) from any address over a minute, 429 TOO_MANY_REQUESTS in the Error shape with Retry-After', () => {
    const { properties } = webAcl();
    const rule = (properties.Rules as Record<string, any>[]).find((r) => r.Name === FIREWALL_RULES.ratePerKey)!;
    expect(rule.Statement.RateBasedStatement).toEqual({
      Limit: settings.webAcl ? settings.webAcl.requestsPerKeyPerMinute : undefined,
      AggregateKeyType: 'CUSTOM_KEYS',
      CustomKeys: [
        {
          Header: {
            Name: 'authorization',
            TextTransformations: [
              { Priority: 0, Type: 'COMPRESS_WHITE_SPACE' },
              { Priority: 1, Type: 'LOWERCASE' },
            ],
          },
        },
      ],
      EvaluationWindowSec: KEY_RATE_WINDOW_SECONDS,
    });
    const response = rule.Action.Block.CustomResponse;
    expect(response.ResponseCode).toBe(429);
    expect(response.ResponseHeaders).toEqual([
      { Name: 'Retry-After', Value: String(RATE_LIMITED_RETRY_AFTER_SECONDS) },
      { Name: 'Cache-Control', Value: 'no-store' },
      { Name: 'X-Content-Type-Options', Value: 'nosniff' },
    ]);
    const body = parseErrorBody(properties.CustomResponseBodies[response.CustomResponseBodyKey].Content);
    expect(body).toEqual({
      code: 'TOO_MANY_REQUESTS',
      message: 'Too many requests with this API key; retry later.',
      status: 429,
    });
    expect(rule.VisibilityConfig).toEqual({
      CloudWatchMetricsEnabled: true,
      SampledRequestsEnabled: false,
      MetricName: FIREWALL_RULES.ratePerKey,
    });
  });

  it('only counts the common rules that would refuse what the API accepts: bodies up to 16 KiB, and no User-Agent', () => {
    // createPet takes bodies above the rule's 8 KB and answers 413 itself above its own limit.
    expect(MAX_BODY_BYTES).toBeGreaterThan(COMMON_RULE_SET_BODY_LIMIT);
    const { properties } = webAcl();
    const common = (properties.Rules as Record<string, any>[]).find((rule) => rule.Name === FIREWALL_RULES.common)!;
    expect(common.Statement.ManagedRuleGroupStatement.RuleActionOverrides).toEqual(
      COUNTED_COMMON_RULES.map((name) => ({ Name: name, ActionToUse: { Count: {} } })),
    );
    expect(COUNTED_COMMON_RULES).toEqual(['SizeRestrictions_BODY', 'NoUserAgent_HEADER']);
  });

  it('answers the rate limit 429 TOO_MANY_REQUESTS in the Error shape, with Retry-After', () => {
    const { properties } = webAcl();
    const rate = (properties.Rules as Record<string, any>[]).find((rule) => rule.Name === FIREWALL_RULES.rateLimit)!;
    const response = rate.Action.Block.CustomResponse;
    expect(response.ResponseCode).toBe(429);
    expect(response.ResponseHeaders).toEqual([
      { Name: 'Retry-After', Value: String(RATE_LIMITED_RETRY_AFTER_SECONDS) },
      { Name: 'Cache-Control', Value: 'no-store' },
      { Name: 'X-Content-Type-Options', Value: 'nosniff' },
    ]);
    const body = properties.CustomResponseBodies[response.CustomResponseBodyKey];
    expect(body.ContentType).toBe('APPLICATION_JSON');
    const parsed = parseErrorBody(body.Content);
    expect(Object.keys(parsed).sort()).toEqual(['code', 'message', 'status']);
    expect(parsed).toMatchObject({ code: 'TOO_MANY_REQUESTS', status: errorStatuses.TOO_MANY_REQUESTS });
    expect(parsed.status).toBe(429);
  });

  it('publishes metrics for the web ACL and every rule, and samples no request (a sample shows the Authorization header)', () => {
    const { properties } = webAcl();
    const configs = [
      properties.VisibilityConfig,
      ...(properties.Rules as Record<string, any>[]).map((rule) => rule.VisibilityConfig),
    ];
    for (const config of configs)
      expect(config).toEqual({
        CloudWatchMetricsEnabled: true,
        SampledRequestsEnabled: false,
        MetricName: expect.any(String),
      });
    expect(properties.VisibilityConfig.MetricName).toBe(`petstore-${stage}`);
    const names = (properties.Rules as Record<string, any>[]).map((rule) => rule.VisibilityConfig.MetricName);
    expect(names).toEqual((properties.Rules as Record<string, any>[]).map((rule) => rule.Name));
  });

  /** A body rule's method and size limit, read back from its statement; its answer's status and parsed body. */
  function bodyRule(name: string) {
    const { properties } = webAcl();
    const rule = (properties.Rules as Record<string, any>[]).find((r) => r.Name === name)!;
    const [method, size] = rule.Statement.AndStatement.Statements as Record<string, any>[];
    expect(method!.ByteMatchStatement).toMatchObject({ FieldToMatch: { Method: {} }, PositionalConstraint: 'EXACTLY' });
    expect(size!.SizeConstraintStatement).toMatchObject({
      ComparisonOperator: 'GT',
      FieldToMatch: { Body: { OversizeHandling: 'MATCH' } },
    });
    const response = rule.Action.Block.CustomResponse;
    const body = properties.CustomResponseBodies[response.CustomResponseBodyKey];
    expect(body.ContentType).toBe('APPLICATION_JSON');
    const parsed = parseErrorBody(body.Content);
    expect(Object.keys(parsed).sort()).toEqual(['code', 'message', 'status']);
    expect(response.ResponseCode).toBe(parsed.status);
    return {
      method: method!.ByteMatchStatement.SearchString as string,
      maxBytes: size!.SizeConstraintStatement.Size as number,
      parsed,
    };
  }

  it('refuses before any function a body over the createPet limit on a POST: 413 PAYLOAD_TOO_LARGE', () => {
    // The method stands for the route: createPet is the only one that takes a body.
    expect(routes.filter((route) => route.method === 'POST').map((route) => route.operation)).toEqual(['createPet']);
    const { method, maxBytes, parsed } = bodyRule(FIREWALL_RULES.bodyTooLarge);
    expect(method).toBe('POST');
    expect(maxBytes).toBe(MAX_BODY_BYTES);
    expect(parsed).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: errorStatuses.PAYLOAD_TOO_LARGE });
    expect(parsed.status).toBe(413);
    expect(parsed.message).toContain(String(MAX_BODY_BYTES));
  });

  it('refuses before any function a GET with a body: 400 VALIDATION_FAILED', () => {
    expect(routes.filter((route) => route.method !== 'POST').every((route) => route.method === 'GET')).toBe(true);
    const { method, maxBytes, parsed } = bodyRule(FIREWALL_RULES.bodyOnGet);
    expect(method).toBe('GET');
    expect(maxBytes).toBe(0);
    expect(parsed).toMatchObject({ code: 'VALIDATION_FAILED', status: errorStatuses.VALIDATION_FAILED });
    expect(parsed.status).toBe(400);
  });

  it('reads at least MAX_BODY_BYTES of a body, so a body of exactly the limit is not oversize', () => {
    const { properties } = webAcl();
    expect(properties.AssociationConfig).toEqual({
      RequestBody: { API_GATEWAY: { DefaultSizeInspectionLimit: BODY_INSPECTION_LIMIT.setting } },
    });
    expect(BODY_INSPECTION_LIMIT.bytes).toBeGreaterThanOrEqual(MAX_BODY_BYTES);
    expect(BODY_INSPECTION_LIMIT.setting).toBe(`KB_${BODY_INSPECTION_LIMIT.bytes / 1024}`);
  });

  it("logs only blocked requests, with the key and the Idempotency-Key redacted, to an aws-waf-logs- group kept and retained as the stage's other logs", () => {
    const { s, id } = webAcl();
    s.template.resourceCountIs('AWS::WAFv2::LoggingConfiguration', 1);
    const [, logging] = s.ofType('AWS::WAFv2::LoggingConfiguration')[0]!;
    const p = props(logging) as Record<string, any>;
    expect(p.ResourceArn).toEqual({ 'Fn::GetAtt': [id, 'Arn'] });
    expect(p.RedactedFields).toEqual(
      expect.arrayContaining([
        { SingleHeader: { Name: 'authorization' } },
        { SingleHeader: { Name: 'idempotency-key' } },
      ]),
    );
    expect(p.LoggingFilter).toEqual({
      DefaultBehavior: 'DROP',
      Filters: [{ Behavior: 'KEEP', Requirement: 'MEETS_ANY', Conditions: [{ ActionCondition: { Action: 'BLOCK' } }] }],
    });
    // Named aws-waf-logs-petstore-<stage>-<first part of the stack id>: a stack deployed after a teardown gets its own.
    const groupName = {
      'Fn::Join': [
        '',
        [
          blockedRequestsLogGroupPrefix(stage),
          {
            'Fn::Select': [
              0,
              { 'Fn::Split': ['-', { 'Fn::Select': [2, { 'Fn::Split': ['/', ref('AWS::StackId')] }] }] },
            ],
          },
        ],
      ],
    };
    const [groupId, group] = s
      .ofType('AWS::Logs::LogGroup')
      .find(([, g]) => JSON.stringify(props(g).LogGroupName) === JSON.stringify(groupName))!;
    // WAF takes the group's ARN without the `:*` of its Arn attribute: the same name, joined into the ARN.
    const destination = JSON.stringify(p.LogDestinationConfigs);
    expect(destination).toContain(
      `:log-group:${blockedRequestsLogGroupPrefix(stage)}",${JSON.stringify(groupName['Fn::Join'][1]![1])}]`,
    );
    expect(props(group).RetentionInDays).toBe(settings.logRetention);
    expect(props(group).RetentionInDays).toBeGreaterThan(7);
    expect(group.DeletionPolicy).toBe(settings.protectData ? 'Retain' : 'Delete');
    expect(s.json.Outputs?.BlockedRequestsLogGroup?.Value).toEqual(ref(groupId));
  });

  it('raises WafBlocked on the requests it blocks, to the stage topic, and graphs them on the dashboard', () => {
    const { s } = webAcl();
    const [topicId] = s.ofType('AWS::SNS::Topic')[0]!;
    const alarm = alarmNamed(s, stage, 'WafBlocked');
    expect(alarm).toMatchObject({
      Namespace: 'AWS/WAFV2',
      MetricName: 'BlockedRequests',
      Statistic: 'Sum',
      Period: 60,
      Threshold: settings.alarms.wafBlockedRequests,
      AlarmActions: [ref(topicId)],
    });
    expect(alarm.Dimensions).toEqual(
      expect.arrayContaining([
        { Name: 'WebACL', Value: `petstore-${stage}` },
        { Name: 'Rule', Value: 'ALL' },
        { Name: 'Region', Value: ref('AWS::Region') },
      ]),
    );
    const body = JSON.stringify(props(s.ofType('AWS::CloudWatch::Dashboard')[0]![1]).DashboardBody);
    expect(body).toContain('Web ACL: allowed and blocked requests');
    expect(body).toContain('Web ACL: blocked and counted per rule');
  });
});

describe.each(STAGES)('PetStore-%s template', (stage) => {
  it('samples no request anywhere: WAF samples carry every header, the bearer key included', () => {
    const sampling: string[] = [];
    const walk = (value: unknown, path: string): void => {
      if (!value || typeof value !== 'object') return;
      for (const [key, child] of Object.entries(value)) {
        if (key === 'SampledRequestsEnabled' && child !== false) sampling.push(`${path}.${key}`);
        walk(child, `${path}.${key}`);
      }
    };
    walk(of(stage).json.Resources, 'Resources');
    expect(sampling).toEqual([]);
  });
});

describe.each(STAGES)('PetStore-%s gateway answer to a web ACL block', (stage) => {
  it('is 403 FORBIDDEN in the Error shape (WAF_FILTERED), whether or not the stage has a web ACL', () => {
    const s = of(stage);
    const [, response] = s
      .ofType('AWS::ApiGateway::GatewayResponse')
      .find(([, r]) => props(r).ResponseType === 'WAF_FILTERED')!;
    expect(props(response).StatusCode).toBe('403');
    const body = parseErrorBody((props(response).ResponseTemplates as Record<string, string>)['application/json']!);
    expect(body).toMatchObject({ code: 'FORBIDDEN', status: 403 });
  });
});

describe('a stage with its web ACL turned off (webAcl: false)', () => {
  it('has no WAF resources, no WafBlocked alarm and no WAF graphs', () => {
    const s = synthesize(
      testApp({ stages: ['staging'], settings: { staging: { webAcl: false } } }).stacks.get('staging')!,
    );
    s.template.resourceCountIs('AWS::WAFv2::WebACL', 0);
    s.template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 0);
    expect(s.stack.firewall).toBeUndefined();
    const names = s.ofType('AWS::CloudWatch::Alarm').map(([, a]) => String(props(a).AlarmName));
    expect(names.some((name) => name.endsWith('WafBlocked'))).toBe(false);
    expect(JSON.stringify(s.json)).not.toContain('AWS/WAFV2');
  });
});
