/**
 * The stage's web firewall (AWS WAFv2, regional, on the API stage) where the stage settings ask for
 * one: a rate limit per source address, then AWS's managed common and known-bad-inputs rule groups.
 * Its refusals are Error bodies like every other answer: the rate limit answers 429
 * TOO_MANY_REQUESTS with Retry-After (a WAF custom response), a managed rule 403 FORBIDDEN (API
 * Gateway's WAF_FILTERED gateway response, ../gatewayErrors.ts).
 */
import { Aws, Duration } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import type { Construct } from 'constructs';
import { API_KEY_FORMAT } from '../../lib/domain/apiKeys.ts';
import { BEARER_CHALLENGE, MISSING_OR_INVALID_KEY_MESSAGE, errorBody } from '../gatewayErrors.ts';
import type { StageSettings, WebAclSettings } from '../stages.ts';
import { Concern } from './concern.ts';

/**
 * Seconds a client over the rate limit is told to wait. The block lasts until the address's count
 * over the window falls below the limit, so a first retry after a minute may be refused again.
 */
export const RATE_LIMITED_RETRY_AFTER_SECONDS = 60;
/** The window the rate limit counts requests over. */
export const RATE_WINDOW_SECONDS = 300;

/** The rules, in the order the web ACL evaluates them; each is also its CloudWatch metric name (dimension `Rule`). */
export const FIREWALL_RULES = {
  rateLimit: 'RatePerAddress',
  common: 'AWSManagedRulesCommonRuleSet',
  knownBadInputs: 'AWSManagedRulesKnownBadInputsRuleSet',
} as const;

/**
 * Rules of the common rule group that only count, never block:
 * - `SizeRestrictions_BODY` blocks bodies over 8 KB, but createPet accepts up to MAX_BODY_BYTES
 *   (lib/http/jsonBody.ts, 16 KiB) and answers a larger one 413 PAYLOAD_TOO_LARGE itself, in every stage
 *   alike; lowering our limit instead would change the API's contract in one stage only.
 * - `NoUserAgent_HEADER` blocks requests without a User-Agent: that stops no attacker (any tool
 *   sends one) and would refuse in production a minimal client that works in staging.
 */
export const COUNTED_COMMON_RULES = ['SizeRestrictions_BODY', 'NoUserAgent_HEADER'] as const;
/** What `SizeRestrictions_BODY` blocks above, in bytes (AWS's documentation of the rule group). */
export const COMMON_RULE_SET_BODY_LIMIT = 8 * 1024;

const RATE_LIMITED_BODY = 'TooManyRequests';

export interface FirewallProps {
  readonly settings: StageSettings;
  readonly webAcl: WebAclSettings;
  readonly stage: apigw.Stage;
}

export class Firewall extends Concern {
  readonly webAcl: wafv2.CfnWebACL;
  /** The web ACL's name, literal (its metrics' `WebACL` dimension). */
  readonly webAclName: string;

  constructor(scope: Construct, id: string, { settings, webAcl, stage }: FirewallProps) {
    super(scope, id);
    this.webAclName = `petstore-${settings.stage}`;
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      name: this.webAclName,
      description: `Pet Store Inventory API, ${settings.stage}: rate limit per address, AWS managed rules`,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility(this.webAclName),
      customResponseBodies: {
        [RATE_LIMITED_BODY]: {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify(errorBody('TOO_MANY_REQUESTS', 'Too many requests from this address; retry later.')),
        },
        ...bearerKeyResponseBodies(),
      },
      rules: [
        {
          name: FIREWALL_RULES.rateLimit,
          priority: 0,
          statement: {
            rateBasedStatement: {
              limit: webAcl.requestsPerAddressPer5Minutes,
              aggregateKeyType: 'IP',
              evaluationWindowSec: RATE_WINDOW_SECONDS,
            },
          },
          action: {
            block: {
              customResponse: {
                responseCode: 429,
                customResponseBodyKey: RATE_LIMITED_BODY,
                responseHeaders: [{ name: 'Retry-After', value: String(RATE_LIMITED_RETRY_AFTER_SECONDS) }],
              },
            },
          },
          visibilityConfig: visibility(FIREWALL_RULES.rateLimit),
        },
        managedRuleGroup(FIREWALL_RULES.common, 1, COUNTED_COMMON_RULES),
        managedRuleGroup(FIREWALL_RULES.knownBadInputs, 2, []),
        bearerKeyRule(),
      ],
    });
    new wafv2.CfnWebACLAssociation(this, 'WebAclAssociation', {
      resourceArn: stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }

  /** A WAF metric of the whole web ACL (`rule` ALL) or of one rule, per minute. */
  metric(metricName: 'AllowedRequests' | 'BlockedRequests' | 'CountedRequests', rule = 'ALL', label?: string): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: 'AWS/WAFV2',
      metricName,
      dimensionsMap: { WebACL: this.webAclName, Region: Aws.REGION, Rule: rule },
      statistic: 'Sum',
      period: Duration.minutes(1),
      ...(label ? { label } : {}),
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Keyless traffic (README "Keyless traffic and per-key limits")

/** The rule refusing any request whose Authorization is not a well-formed bearer key; its metric name too. */
export const BEARER_KEY_RULE = 'WellFormedBearerKey';
/** After the rules above, with room for more between. */
export const BEARER_KEY_RULE_PRIORITY = 10;
const UNAUTHORIZED_BODY = 'Unauthorized';

/**
 * What a well-formed `Authorization` looks like after WAF's LOWERCASE transformation: `bearer `, then
 * a key as `npm run keys` issues it (lib/domain/apiKeys.ts API_KEY_FORMAT, lowercased). Its shape
 * only: whether the key is valid is the authorizer's question.
 */
export function bearerKeyPattern(): string {
  const key = API_KEY_FORMAT.source.replace(/^\^|\$$/g, '').replace(/[()]/g, '');
  return `^bearer +${key.toLowerCase()} *$`;
}

function bearerKeyResponseBodies(): Record<string, wafv2.CfnWebACL.CustomResponseBodyProperty> {
  return {
    [UNAUTHORIZED_BODY]: {
      contentType: 'APPLICATION_JSON',
      content: JSON.stringify(errorBody('UNAUTHORIZED', MISSING_OR_INVALID_KEY_MESSAGE)),
    },
  };
}

/**
 * Blocks, 401 in the Error shape with the bearer challenge, every request but a CORS preflight whose
 * Authorization header is missing or not `Bearer psk_<id>_<secret>`: such a request reaches neither
 * the authorizer nor any function, and costs WAF's $0.60 per million only.
 */
function bearerKeyRule(): wafv2.CfnWebACL.RuleProperty {
  const wellFormed: wafv2.CfnWebACL.StatementProperty = {
    regexMatchStatement: {
      fieldToMatch: { singleHeader: { Name: 'authorization' } },
      regexString: bearerKeyPattern(),
      textTransformations: [{ priority: 0, type: 'LOWERCASE' }],
    },
  };
  const preflight: wafv2.CfnWebACL.StatementProperty = {
    byteMatchStatement: {
      fieldToMatch: { method: {} },
      positionalConstraint: 'EXACTLY',
      searchString: 'OPTIONS',
      textTransformations: [{ priority: 0, type: 'NONE' }],
    },
  };
  return {
    name: BEARER_KEY_RULE,
    priority: BEARER_KEY_RULE_PRIORITY,
    statement: { andStatement: { statements: [{ notStatement: { statement: wellFormed } }, { notStatement: { statement: preflight } }] } },
    action: {
      block: {
        customResponse: {
          responseCode: 401,
          customResponseBodyKey: UNAUTHORIZED_BODY,
          responseHeaders: [{ name: 'WWW-Authenticate', value: BEARER_CHALLENGE }],
        },
      },
    },
    visibilityConfig: visibility(BEARER_KEY_RULE),
  };
}

/** Blocks take the group's own actions (403 through WAF_FILTERED), except the rules `counted`. */
function managedRuleGroup(name: string, priority: number, counted: readonly string[]): wafv2.CfnWebACL.RuleProperty {
  return {
    name,
    priority,
    overrideAction: { none: {} },
    statement: {
      managedRuleGroupStatement: {
        vendorName: 'AWS',
        name,
        ...(counted.length > 0
          ? { ruleActionOverrides: counted.map((rule) => ({ name: rule, actionToUse: { count: {} } })) }
          : {}),
      },
    },
    visibilityConfig: visibility(name),
  };
}

const visibility = (metricName: string): wafv2.CfnWebACL.VisibilityConfigProperty => ({
  cloudWatchMetricsEnabled: true,
  sampledRequestsEnabled: true,
  metricName,
});
