/**
 * Keyless traffic and per-key limits (docs/operating.md "Keyless traffic and per-key limits"): a cached Lambda
 * REQUEST authorizer in front of every operation, and a usage plan that gives each key its own
 * throttle and daily quota. The authorizer returns the key's SHA-256 hex digest as
 * `usageIdentifierKey` (the API's key source is AUTHORIZER), which is the value of the key's API
 * Gateway API key: `npm run keys` creates it, and adds it to the plan, beside the control-table item.
 * Clients keep sending `Authorization: Bearer <key>`; no plaintext key is ever given to API Gateway.
 */
import { Duration } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { AUTHORIZER_CACHE_TTL_SECONDS, type KeyLimits, type Stage } from '../stages.ts';
import { IdTransparentGroup } from './idTransparentGroup.ts';
import { stageFunction, stageLogGroup, type FunctionLimits, type LogLifetime } from './functions.ts';
import { authorizerStatements } from './permissions.ts';

const AUTHORIZER_ENTRY = 'functions/authorize.ts';
/** The header the authorizer reads, and its cache is keyed by. */
const AUTHORIZER_IDENTITY_SOURCE = 'Authorization';

export interface KeyAuthorizerProps {
  readonly stage: Stage;
  readonly limits: FunctionLimits;
  readonly logs: LogLifetime;
  /** The authorizer's reserved concurrency, or none: the account's unreserved pool. */
  readonly reservedConcurrency?: number | undefined;
  readonly controlTableName: string;
  readonly controlTableArn: string;
  /**
   * Publishes the authorizer's function and returns what API Gateway invokes: its `live` alias,
   * moved by canary where the operations' are (./deployment.ts).
   */
  readonly publish: (fn: NodejsFunction) => lambda.IFunction;
}

export class KeyAuthorizer extends IdTransparentGroup {
  readonly fn: NodejsFunction;
  /** What API Gateway invokes: the function's `live` alias. */
  readonly live: lambda.IFunction;
  readonly logGroup: logs.LogGroup;
  readonly authorizer: apigw.RequestAuthorizer;

  constructor(scope: Construct, id: string, props: KeyAuthorizerProps) {
    super(scope, id);
    const { stage, controlTableName, controlTableArn } = props;
    const logGroup = stageLogGroup(this, 'AuthorizerLogs', props.logs);
    this.logGroup = logGroup;
    this.fn = stageFunction(this, 'Authorizer', {
      entry: AUTHORIZER_ENTRY,
      description: `Checks each request's bearer API key before any operation runs (${stage})`,
      roleDescription: `Runs the API's key authorizer (${stage}): reads the API keys, nothing else.`,
      limits: props.limits,
      policyName: 'authorizer',
      statements: authorizerStatements({ controlTableArn, logGroup }),
      logGroup,
      reservedConcurrentExecutions: props.reservedConcurrency,
      // No TABLE_NAME: the authorizer never touches the pets table.
      environment: { CONTROL_TABLE_NAME: controlTableName },
    });
    this.live = props.publish(this.fn);
    this.authorizer = new apigw.RequestAuthorizer(this, 'KeyAuthorizer', {
      authorizerName: `petstore-${stage}-keys`,
      // The alias: API Gateway's permission is on it, never on the function's unpublished $LATEST.
      handler: this.live,
      // A request without the header is answered 401 by API Gateway itself, invoking nothing.
      identitySources: [apigw.IdentitySource.header(AUTHORIZER_IDENTITY_SOURCE)],
      resultsCacheTtl: Duration.seconds(AUTHORIZER_CACHE_TTL_SECONDS),
    });
  }
}

export interface KeyUsagePlanProps {
  readonly stage: Stage;
  /** Each key's throttle and daily quota, and its throttle on createPet. */
  readonly limits: KeyLimits;
  readonly api: apigw.IRestApi;
  readonly apiStage: apigw.Stage;
  /** createPet's method, whose throttle per key is its own. */
  readonly createPet: apigw.Method;
}

/**
 * The stage's usage plan: each key's throttle and daily quota, from `keyLimits` in infra/stages.ts,
 * and createPet's tighter throttle per key (a method throttle on its method).
 */
export class KeyUsagePlan extends IdTransparentGroup {
  readonly plan: apigw.UsagePlan;

  constructor(scope: Construct, id: string, { stage, limits, api, apiStage, createPet }: KeyUsagePlanProps) {
    super(scope, id);
    const { rateLimit, burstLimit, requestsPerDay, createPet: createLimits } = limits;
    this.plan = new apigw.UsagePlan(this, 'KeyUsagePlan', {
      name: `petstore-${stage}-keys`,
      description: `Each Pet Store API key's own limits (${stage}); npm run keys adds every key.`,
      throttle: { rateLimit, burstLimit },
      quota: { limit: requestsPerDay, period: apigw.Period.DAY },
      apiStages: [
        {
          api,
          stage: apiStage,
          throttle: [
            { method: createPet, throttle: { rateLimit: createLimits.rateLimit, burstLimit: createLimits.burstLimit } },
          ],
        },
      ],
    });
  }
}
