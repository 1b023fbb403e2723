/**
 * The web ACL (infra/constructs/firewall.ts) where the stage settings ask for one: its rules, its
 * answers in the Error shape, its association with the API stage, its metrics and alarm.
 */
import { describe, expect, it } from 'vitest';
import {
  BEARER_KEY_RULE,
  COMMON_RULE_SET_BODY_LIMIT,
  COUNTED_COMMON_RULES,
  FIREWALL_RULES,
  RATE_LIMITED_RETRY_AFTER_SECONDS,
  RATE_WINDOW_SECONDS,
} from '../../infra/constructs/firewall.ts';
import { STAGE_SETTINGS, STAGES } from '../../infra/stages.ts';
import { errorStatuses } from '../../lib/domain/errors.ts';
import { MAX_BODY_BYTES } from '../../lib/http/jsonBody.ts';
import { parseErrorBody, props, ref, synthesizedStages } from './templates.ts';

const of = synthesizedStages();
/** AWS WAF's smallest rate-based limit. */
const WAF_MINIMUM_RATE_LIMIT = 10;

const withWebAcl = STAGES.filter((stage) => STAGE_SETTINGS[stage].webAcl);
const withoutWebAcl = STAGES.filter((stage) => !STAGE_SETTINGS[stage].webAcl);

describe('web ACL settings', () => {
  it('are on in production and off in staging', () => {
    expect(withWebAcl).toEqual(['production']);
    expect(withoutWebAcl).toEqual(['staging']);
  });

  it.each(withWebAcl)('let no single address in %s take more than a tenth of the stage throttle over the window', (stage) => {
    const { webAcl, throttling } = STAGE_SETTINGS[stage];
    if (!webAcl) throw new Error('unreachable');
    expect(webAcl.requestsPerAddressPer5Minutes).toBeLessThanOrEqual((throttling.rateLimit * RATE_WINDOW_SECONDS) / 10);
    expect(webAcl.requestsPerAddressPer5Minutes).toBeGreaterThanOrEqual(WAF_MINIMUM_RATE_LIMIT);
  });
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

  it('evaluates the rate limit per address first, then the managed common and known-bad-inputs groups', () => {
    const { properties } = webAcl();
    const rules = (properties.Rules as Record<string, any>[]).sort((a, b) => a.Priority - b.Priority);
    // Then the bearer-key rule (test/infra/authorizer.test.ts).
    expect(rules.map((rule) => rule.Name)).toEqual([FIREWALL_RULES.rateLimit, FIREWALL_RULES.common, FIREWALL_RULES.knownBadInputs, BEARER_KEY_RULE]);
    const [rate, common, badInputs] = rules;
    expect(rate!.Statement.RateBasedStatement).toEqual({
      Limit: settings.webAcl && settings.webAcl.requestsPerAddressPer5Minutes,
      AggregateKeyType: 'IP',
      EvaluationWindowSec: RATE_WINDOW_SECONDS,
    });
    for (const [rule, name] of [
      [common, 'AWSManagedRulesCommonRuleSet'],
      [badInputs, 'AWSManagedRulesKnownBadInputsRuleSet'],
    ] as const) {
      // The group's own actions apply (None), so its blocks stay blocks.
      expect(rule!.OverrideAction, name).toEqual({ None: {} });
      expect(rule!.Statement.ManagedRuleGroupStatement, name).toMatchObject({ VendorName: 'AWS', Name: name });
    }
    expect(badInputs!.Statement.ManagedRuleGroupStatement).not.toHaveProperty('RuleActionOverrides');
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
    expect(response.ResponseHeaders).toEqual([{ Name: 'Retry-After', Value: String(RATE_LIMITED_RETRY_AFTER_SECONDS) }]);
    const body = properties.CustomResponseBodies[response.CustomResponseBodyKey];
    expect(body.ContentType).toBe('APPLICATION_JSON');
    const parsed = parseErrorBody(body.Content);
    expect(Object.keys(parsed).sort()).toEqual(['code', 'message', 'status']);
    expect(parsed).toMatchObject({ code: 'TOO_MANY_REQUESTS', status: errorStatuses.TOO_MANY_REQUESTS });
    expect(parsed.status).toBe(429);
  });

  it('publishes metrics and samples for the web ACL and every rule', () => {
    const { properties } = webAcl();
    const configs = [properties.VisibilityConfig, ...(properties.Rules as Record<string, any>[]).map((rule) => rule.VisibilityConfig)];
    for (const config of configs) expect(config).toMatchObject({ CloudWatchMetricsEnabled: true, SampledRequestsEnabled: true });
    expect(properties.VisibilityConfig.MetricName).toBe(`petstore-${stage}`);
    const names = (properties.Rules as Record<string, any>[]).map((rule) => rule.VisibilityConfig.MetricName);
    expect(names).toEqual((properties.Rules as Record<string, any>[]).map((rule) => rule.Name));
  });

  it('raises WafBlocked on the requests it blocks, to the stage topic, and graphs them on the dashboard', () => {
    const { s } = webAcl();
    const [topicId] = s.ofType('AWS::SNS::Topic')[0]!;
    const [, alarm] = s.ofType('AWS::CloudWatch::Alarm').find(([, a]) => props(a).AlarmName === `petstore-${stage}-WafBlocked`)!;
    expect(props(alarm)).toMatchObject({
      Namespace: 'AWS/WAFV2',
      MetricName: 'BlockedRequests',
      Statistic: 'Sum',
      Period: 60,
      Threshold: settings.alarms.wafBlockedRequests,
      AlarmActions: [ref(topicId)],
    });
    expect(props(alarm).Dimensions).toEqual(
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

describe.each(STAGES)('PetStore-%s gateway answer to a web ACL block', (stage) => {
  it('is 403 FORBIDDEN in the Error shape (WAF_FILTERED), whether or not the stage has a web ACL', () => {
    const s = of(stage);
    const [, response] = s.ofType('AWS::ApiGateway::GatewayResponse').find(([, r]) => props(r).ResponseType === 'WAF_FILTERED')!;
    expect(props(response).StatusCode).toBe('403');
    const body = parseErrorBody((props(response).ResponseTemplates as Record<string, string>)['application/json']!);
    expect(body).toMatchObject({ code: 'FORBIDDEN', status: 403 });
  });
});

describe.each(withoutWebAcl)('PetStore-%s without a web ACL', (stage) => {
  it('has no WAF resources, no WafBlocked alarm and no WAF graphs', () => {
    const s = of(stage);
    s.template.resourceCountIs('AWS::WAFv2::WebACL', 0);
    s.template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 0);
    expect(s.stack.firewall).toBeUndefined();
    const names = s.ofType('AWS::CloudWatch::Alarm').map(([, a]) => String(props(a).AlarmName));
    expect(names.some((name) => name.endsWith('WafBlocked'))).toBe(false);
    expect(JSON.stringify(s.json)).not.toContain('AWS/WAFV2');
  });
});
