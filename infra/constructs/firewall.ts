/**
 * The stage's web firewall (AWS WAFv2, regional, on the API stage) where the stage settings ask for
 * one: a rate limit per source address, the routes' body limits, AWS's managed common,
 * known-bad-inputs and IP-reputation rule groups, the bearer-key shape, then a rate limit per key.
 * Its refusals are Error bodies like every other answer: the rate limits answer 429
 * TOO_MANY_REQUESTS with Retry-After, the body limits 413 PAYLOAD_TOO_LARGE and 400
 * VALIDATION_FAILED (WAF custom responses), a managed rule 403 FORBIDDEN (API Gateway's
 * WAF_FILTERED gateway response, ../gatewayErrors.ts).
 *
 * No request is ever sampled: a WAF sample carries every header, `Authorization: Bearer psk_...`
 * included, to anyone allowed `wafv2:GetSampledRequests`. The blocked requests are logged instead,
 * with the key and the Idempotency-Key redacted.
 */
import { ArnFormat, Aws, Duration, Fn, Stack } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import type { Construct } from 'constructs';
import { errorStatuses, type ErrorCode } from '../../lib/domain/errors.ts';
import { BODY_REFUSALS, MAX_BODY_BYTES } from '../../lib/http/bodyLimits.ts';
import { HARDENING_HEADERS } from '../../lib/http/responses.ts';
import { errorBody } from '../gatewayErrors.ts';
import { API_KEY_FORMAT } from '../../lib/domain/apiKeys.ts';
import { BEARER_CHALLENGE, MISSING_OR_INVALID_KEY_MESSAGE } from '../gatewayErrors.ts';
import type { Stage, WebAclSettings } from '../stages.ts';
import type { LogLifetime } from './functions.ts';
import { IdTransparentGroup } from './idTransparentGroup.ts';
import { stackInstanceId } from './stackInstance.ts';

/**
 * Seconds a client over the rate limit is told to wait. The block lasts until the address's count
 * over the window falls below the limit, so a first retry after a minute may be refused again.
 */
export const RATE_LIMITED_RETRY_AFTER_SECONDS = 60;
/** The window the rate limit per address counts requests over. */
export const RATE_WINDOW_SECONDS = 300;
/** The window the rate limit per key counts requests over: a minute, WAF's shortest, so a key is stopped soon. */
export const KEY_RATE_WINDOW_SECONDS = 60;

/** The rules, in the order the web ACL evaluates them; each is also its CloudWatch metric name (dimension `Rule`). */
export const FIREWALL_RULES = {
  rateLimit: 'RatePerAddress',
  bodyOnGet: 'NoBodyOnGet',
  bodyTooLarge: 'BodyOverLimit',
  common: 'AWSManagedRulesCommonRuleSet',
  knownBadInputs: 'AWSManagedRulesKnownBadInputsRuleSet',
  ipReputation: 'AWSManagedRulesAmazonIpReputationList',
  ratePerKey: 'RatePerKey',
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

/**
 * The refusals of the firewall's own rules, in the Error shape, by custom response body key. The
 * body refusals are lib/http/bodyLimits.ts's, which createPet and the local API give too: one limit, one wording.
 */
const FIREWALL_REFUSALS = {
  TooManyRequests: { code: 'TOO_MANY_REQUESTS', message: 'Too many requests from this address; retry later.' },
  TooManyRequestsPerKey: { code: 'TOO_MANY_REQUESTS', message: 'Too many requests with this API key; retry later.' },
  ...BODY_REFUSALS,
} as const satisfies Record<string, { code: ErrorCode; message: string }>;
type Refusal = keyof typeof FIREWALL_REFUSALS;

/**
 * How much of a body WAF reads for API Gateway: 16 KB (16,384 bytes) is the default and costs
 * nothing extra. A body beyond it is "oversize" and matches the body rules outright (`MATCH`), so
 * the limit must be at least MAX_BODY_BYTES for a body of exactly MAX_BODY_BYTES to pass.
 */
export const BODY_INSPECTION_LIMIT = { setting: 'KB_16', bytes: 16 * 1024 } as const;

/**
 * The start of the log group the blocked requests go to (WAF takes only log groups named
 * `aws-waf-logs-...`); the rest is the first part of the stack's id, so that a group retained from an
 * earlier stack of the stage never collides with the next one's. The stack outputs the whole name.
 */
export const blockedRequestsLogGroupPrefix = (stage: string): string => `aws-waf-logs-petstore-${stage}-`;
/**
 * Headers a blocked request's log record shows as `REDACTED`: the bearer key, and the client's
 * Idempotency-Key, which the service itself keeps only as a digest (it may carry a client's own
 * order or payment id, and paired with a leaked key it would replay that client's creates).
 */
const REDACTED_HEADERS = ['authorization', 'idempotency-key'] as const;

export interface FirewallProps {
  readonly stage: Stage;
  /** The rate limits per address and per key. */
  readonly rates: WebAclSettings;
  /** Kept as long as the stage's other logs: the record of an attack outlives the alarm about it. */
  readonly blockedRequestLogs: LogLifetime;
  /** The API stage the web ACL guards. */
  readonly apiStage: apigw.Stage;
}

export class Firewall extends IdTransparentGroup {
  readonly webAcl: wafv2.CfnWebACL;
  /** The web ACL's name, literal (its metrics' `WebACL` dimension). */
  readonly webAclName: string;
  /** The blocked requests, without keys (see REDACTED_HEADERS). */
  readonly blockedRequests: logs.LogGroup;

  constructor(scope: Construct, id: string, { stage, rates, blockedRequestLogs, apiStage }: FirewallProps) {
    super(scope, id);
    this.webAclName = `petstore-${stage}`;
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      name: this.webAclName,
      description: `Pet Store Inventory API, ${stage}: rate limit per address, AWS managed rules`,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility(this.webAclName),
      customResponseBodies: {
        ...Object.fromEntries(
          Object.entries(FIREWALL_REFUSALS).map(([key, { code, message }]) => [
            key,
            { contentType: 'APPLICATION_JSON', content: JSON.stringify(errorBody(code, message)) },
          ]),
        ),
        ...bearerKeyResponseBodies(),
      },
      associationConfig: {
        requestBody: { API_GATEWAY: { defaultSizeInspectionLimit: BODY_INSPECTION_LIMIT.setting } },
      },
      rules: [
        rateRule(
          FIREWALL_RULES.rateLimit,
          0,
          {
            limit: rates.requestsPerAddressPer5Minutes,
            aggregateKeyType: 'IP',
            evaluationWindowSec: RATE_WINDOW_SECONDS,
          },
          'TooManyRequests',
        ),
        // Before the managed groups and before any function: no key is needed to be refused these.
        bodyRule(FIREWALL_RULES.bodyOnGet, 1, 'GET', 0, 'BodyOnGet'),
        bodyRule(FIREWALL_RULES.bodyTooLarge, 2, 'POST', MAX_BODY_BYTES, 'PayloadTooLarge'),
        managedRuleGroup(FIREWALL_RULES.common, 3, COUNTED_COMMON_RULES),
        managedRuleGroup(FIREWALL_RULES.knownBadInputs, 4, []),
        managedRuleGroup(FIREWALL_RULES.ipReputation, 5, []),
        bearerKeyRule(),
        ratePerKeyRule(rates.requestsPerKeyPerMinute),
      ],
    });
    new wafv2.CfnWebACLAssociation(this, 'WebAclAssociation', {
      resourceArn: apiStage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
    this.blockedRequests = this.#logBlockedRequests(stage, blockedRequestLogs);
  }

  /**
   * Only blocked requests (allowed ones are in the API's access log already), so the log's cost
   * follows what the firewall refuses.
   */
  #logBlockedRequests(stage: Stage, { retention, removalPolicy }: LogLifetime): logs.LogGroup {
    const logGroupName = Fn.join('', [blockedRequestsLogGroupPrefix(stage), stackInstanceId()]);
    const logGroup = new logs.LogGroup(this, 'BlockedRequestLogs', {
      logGroupName,
      retention,
      removalPolicy,
    });
    const logging = new wafv2.CfnLoggingConfiguration(this, 'Logging', {
      resourceArn: this.webAcl.attrArn,
      // WAF wants the log group's ARN without the `:*` that its Arn attribute ends with.
      logDestinationConfigs: [
        Stack.of(this).formatArn({
          service: 'logs',
          resource: 'log-group',
          resourceName: logGroupName,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      ],
      redactedFields: REDACTED_HEADERS.map((name) => ({ singleHeader: { Name: name } })),
      loggingFilter: {
        DefaultBehavior: 'DROP',
        Filters: [
          { Behavior: 'KEEP', Requirement: 'MEETS_ANY', Conditions: [{ ActionCondition: { Action: 'BLOCK' } }] },
        ],
      },
    });
    logging.node.addDependency(logGroup);
    return logGroup;
  }

  /** A WAF metric of the whole web ACL (`rule` ALL) or of one rule, per minute. */
  metric(
    metricName: 'AllowedRequests' | 'BlockedRequests' | 'CountedRequests',
    rule = 'ALL',
    label?: string,
  ): cloudwatch.Metric {
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

/** A custom response's status and body key, both from FIREWALL_REFUSALS, with `headers` and those of every answer. */
function refusal(key: Refusal, headers: Record<string, string> = {}): wafv2.CfnWebACL.CustomResponseProperty {
  return {
    responseCode: errorStatuses[FIREWALL_REFUSALS[key].code],
    customResponseBodyKey: key,
    responseHeaders: withHardening(headers),
  };
}

/** `headers` and lib/http/responses.ts HARDENING_HEADERS, as a custom response's headers. */
const withHardening = (headers: Record<string, string>): wafv2.CfnWebACL.CustomHTTPHeaderProperty[] =>
  Object.entries({ ...headers, ...HARDENING_HEADERS }).map(([name, value]) => ({ name, value }));

/** Blocks what `rateBasedStatement` counts over its limit: `answer` (a 429) with Retry-After. */
function rateRule(
  name: string,
  priority: number,
  rateBasedStatement: wafv2.CfnWebACL.RateBasedStatementProperty,
  answer: Refusal,
): wafv2.CfnWebACL.RuleProperty {
  return {
    name,
    priority,
    statement: { rateBasedStatement },
    action: {
      block: { customResponse: refusal(answer, { 'Retry-After': String(RATE_LIMITED_RETRY_AFTER_SECONDS) }) },
    },
    visibilityConfig: visibility(name),
  };
}

/**
 * Blocks a `method` request whose body is over `maxBytes`. Matched on the method alone, not the
 * path: every route of that method has the same limit (test/infra/firewall.test.ts), and a path
 * match could be sidestepped by spelling the path otherwise (`/v1/pets/`, `//v1/pets`).
 */
function bodyRule(
  name: string,
  priority: number,
  method: string,
  maxBytes: number,
  answer: Refusal,
): wafv2.CfnWebACL.RuleProperty {
  return {
    name,
    priority,
    statement: {
      andStatement: {
        statements: [
          {
            byteMatchStatement: {
              fieldToMatch: { method: {} },
              positionalConstraint: 'EXACTLY',
              searchString: method,
              textTransformations: [{ priority: 0, type: 'NONE' }],
            },
          },
          {
            sizeConstraintStatement: {
              fieldToMatch: { body: { oversizeHandling: 'MATCH' } },
              comparisonOperator: 'GT',
              size: maxBytes,
              textTransformations: [{ priority: 0, type: 'NONE' }],
            },
          },
        ],
      },
    },
    action: { block: { customResponse: refusal(answer) } },
    visibilityConfig: visibility(name),
  };
}

// ---------------------------------------------------------------------------------------------
// Keyless traffic (docs/operating.md "Keyless traffic and per-key limits")

/** The rule refusing any request whose Authorization is not a well-formed bearer key; its metric name too. */
export const BEARER_KEY_RULE = 'WellFormedBearerKey';
/** After the rules above, with room for more between. */
const BEARER_KEY_RULE_PRIORITY = 10;
const UNAUTHORIZED_BODY = 'Unauthorized';

/**
 * What WAF makes of an `Authorization` value before both the bearer-key rule and the rate per key read
 * it: blanks (tabs too) compressed to one space, then lower-cased. Every spelling the service accepts
 * of one key (lib/http/auth.ts: `Bearer`, in any case, 1*SP, the key) becomes the same text, so the
 * rule passes it and the rate counts it as that key, once (test/infra/ratePerKey.test.ts).
 * (WAF's TRIM is not in CloudFormation's schema; HTTP strips a value's surrounding blanks itself,
 * and a value WAF might see with them fails the rule's pattern: refused, never counted apart.)
 */
const AUTHORIZATION_TRANSFORMATIONS: wafv2.CfnWebACL.TextTransformationProperty[] = [
  { priority: 0, type: 'COMPRESS_WHITE_SPACE' },
  { priority: 1, type: 'LOWERCASE' },
];

/**
 * What a well-formed `Authorization` looks like after AUTHORIZATION_TRANSFORMATIONS: `bearer `, one
 * space, then a key as `npm run keys` issues it (lib/domain/apiKeys.ts API_KEY_FORMAT, lowercased),
 * and nothing else. Its shape only: whether the key is valid is the authorizer's question.
 */
export function bearerKeyPattern(): string {
  const key = API_KEY_FORMAT.source.replace(/^\^|\$$/g, '').replace(/[()]/g, '');
  return `^bearer ${key.toLowerCase()}$`;
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
      textTransformations: AUTHORIZATION_TRANSFORMATIONS,
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
    statement: {
      andStatement: {
        statements: [{ notStatement: { statement: wellFormed } }, { notStatement: { statement: preflight } }],
      },
    },
    action: {
      block: {
        customResponse: {
          responseCode: 401,
          customResponseBodyKey: UNAUTHORIZED_BODY,
          responseHeaders: withHardening({ 'WWW-Authenticate': BEARER_CHALLENGE }),
        },
      },
    },
    visibilityConfig: visibility(BEARER_KEY_RULE),
  };
}

/**
 * Blocks, 429 in the Error shape with Retry-After, any API key (its `Authorization` value after
 * AUTHORIZATION_TRANSFORMATIONS, however it is spelt, whatever the address) that sent more than `limit`
 * requests in the last minute: the hard ceiling behind the
 * usage plan's best-effort throttle. After the bearer-key rule, so only well-formed keys are counted;
 * a request without the header is not counted (WAF leaves out a request missing an aggregation key).
 */
function ratePerKeyRule(limit: number): wafv2.CfnWebACL.RuleProperty {
  return rateRule(
    FIREWALL_RULES.ratePerKey,
    BEARER_KEY_RULE_PRIORITY + 1,
    {
      limit,
      aggregateKeyType: 'CUSTOM_KEYS',
      customKeys: [{ header: { name: 'authorization', textTransformations: AUTHORIZATION_TRANSFORMATIONS } }],
      evaluationWindowSec: KEY_RATE_WINDOW_SECONDS,
    },
    'TooManyRequestsPerKey',
  );
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

/** Metrics, never samples: a sample would show the request's `Authorization` header. */
const visibility = (metricName: string): wafv2.CfnWebACL.VisibilityConfigProperty => ({
  cloudWatchMetricsEnabled: true,
  sampledRequestsEnabled: false,
  metricName,
});
