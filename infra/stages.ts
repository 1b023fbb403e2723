/**
 * The deployment stages. Each gets its own stack (`PetStore-<stage>`) with its own table,
 * secret, functions and API, so nothing staging does can touch production. What an account holds
 * once for both (API Gateway's CloudWatch role setting) is neither's: the account stack owns it
 * (infra/accountStack.ts).
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { OperationName } from '../lib/domain/routes.ts';
import { STAGES, type Stage } from '../lib/domain/stages.ts';
import { DEFAULT_STATUS_INDEX_SHARDS } from '../lib/store/table.ts';
import { stackName } from './names.ts';

export { STAGES, stackName, type Stage };

export interface StageSettings {
  readonly stage: Stage;
  /**
   * The AWS account (12 digits) the stage deploys to, or none: the account of the deployer's credentials.
   * Set, a deploy with another account's credentials stops before changing anything (docs/deploying.md
   * "Region and account": one account per stage is the recommendation).
   */
  readonly account?: string | undefined;
  /**
   * Production keeps its data: table and secret are retained, the table has deletion protection
   * and the stack termination protection. Staging can be torn down completely.
   */
  readonly protectData: boolean;
  readonly logRetention: RetentionDays;
  /** API Gateway stage throttling (steady requests per second, and burst). */
  readonly throttling: { readonly rateLimit: number; readonly burstLimit: number };
  readonly functionMemoryMiB: number;
  readonly functionTimeout: Duration;
  /** Browser origins allowed by CORS (e.g. `https://app.example.com`); none by default. */
  readonly corsAllowedOrigins: readonly string[];
  /** Alarm thresholds (infra/constructs/monitoring.ts; docs/operating.md "Alarms"). */
  readonly alarms: AlarmThresholds;
  /**
   * Refuse to deploy the stage unless its alarms reach someone: the stack's `AlarmEmail` parameter
   * then has no default, so `cdk deploy` must be given one (docs/operating.md "Alarms"), unless `alarmEmails`
   * or `alarmTopicArns` below already name a subscriber. Without it the parameter may stay empty.
   */
  readonly requireAlarmSubscriber: boolean;
  /** More addresses that get the stage's alarms by email (SNS subscriptions); each must confirm once. */
  readonly alarmEmails: readonly string[];
  /** Existing SNS topics (ARNs, at most 4) every alarm also notifies, e.g. a team's paging topic. */
  readonly alarmTopicArns: readonly string[];
  /** AWS WAF in front of the API stage (infra/constructs/firewall.ts), or none. */
  readonly webAcl: WebAclSettings | false;
  /**
   * Shift traffic to a new version gradually (CodeDeploy, 10% for 5 minutes, rolled back when an
   * alarm fires) rather than all at once.
   */
  readonly canaryDeploys: boolean;
  /**
   * Shards of the status index's partition key (lib/store/table.ts): one status takes about
   * 1,000 creates a second per shard, and each listing by status queries every shard. Keep
   * `throttling.burstLimit / statusIndexShards` at most half of 1,000 (test/infra/storage.test.ts).
   * Raising it needs no backfill if listPets reads the new count before createPet writes it;
   * lowering it is a migration (docs/performance.md "The status index").
   */
  readonly statusIndexShards: number;
  /**
   * Each API key's own limits (docs/operating.md "Keyless traffic and per-key limits"): an API Gateway usage
   * plan whose keys the authorizer names (`KeyUsagePlan` in infra/constructs/authorizer.ts), so one key cannot spend the
   * stage's whole throttle nor fill the shared inventory. API Gateway applies them best effort; in a
   * stage with a web ACL, its per-key rate rule is the hard ceiling behind them.
   */
  readonly keyLimits: KeyLimits;
  /**
   * Lambda reserved concurrency (docs/deploying.md "Reserved concurrency"), or none (the account's
   * unreserved pool): each function's own share, which no other function can take and which it
   * cannot exceed. The authorizer's keeps a flood of refused keys from taking the operations'
   * concurrency; each operation's keeps one from starving the others. Lambda refuses a deploy that
   * would leave the account fewer than 10 unreserved executions: infra/concurrencyPreflight.ts
   * says so, before CloudFormation does, against the account's quota.
   */
  readonly reservedConcurrency: ReservedConcurrency | false;
  /**
   * AWS Backup of the pets table (infra/constructs/backup.ts; docs/deploying.md "Backups"): a daily
   * recovery point kept `retentionDays`, in a vault the stack retains, or none.
   */
  readonly backup: BackupSettings | false;
}

export interface BackupSettings {
  /** Days each daily recovery point is kept (AWS Backup deletes it after them). */
  readonly retentionDays: number;
}

export interface Throttle {
  /** Steady requests per second. */
  readonly rateLimit: number;
  readonly burstLimit: number;
}

export interface KeyLimits extends Throttle {
  /** Requests per key per UTC day. */
  readonly requestsPerDay: number;
  /**
   * createPet's own throttle per key, tighter than the reads': each create is a stored pet that
   * nothing deletes (a method throttle of the usage plan, on POST /pets).
   */
  readonly createPet: Throttle;
}

export interface ReservedConcurrency {
  readonly authorizer: number;
  readonly operations: Readonly<Record<OperationName, number>>;
}

/** The executions a stage reserves in all (0 for none). */
export const reservedTotal = ({ reservedConcurrency }: Pick<StageSettings, 'reservedConcurrency'>): number =>
  reservedConcurrency
    ? reservedConcurrency.authorizer + Object.values(reservedConcurrency.operations).reduce((sum, n) => sum + n, 0)
    : 0;

/** The executions the stage reserves for one function (the authorizer or an operation's), or none. */
export const reservedFor = (
  { reservedConcurrency }: Pick<StageSettings, 'reservedConcurrency'>,
  fn: 'authorizer' | OperationName,
): number | undefined =>
  !reservedConcurrency
    ? undefined
    : fn === 'authorizer'
      ? reservedConcurrency.authorizer
      : reservedConcurrency.operations[fn];

export { AUTHORIZER_CACHE_TTL_SECONDS } from './authorizerCache.ts';

/** Every alarm is evaluated on 1-minute periods and fires on `datapointsToAlarm` of `evaluationPeriods`. */
export interface AlarmThresholds {
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm: number;
  /** API Gateway 5XXError as a share of requests, percent. */
  readonly api5xxRatePercent: number;
  /** API Gateway 4XXError as a share of requests, percent (a broken client, or an attack). */
  readonly api4xxRatePercent: number;
  /** API Gateway Latency p99 of each route's method, milliseconds. */
  readonly apiLatencyP99Ms: number;
  /** Requests the stage throttled (429) in a minute. */
  readonly apiThrottledRequests: number;
  /** Requests answered 401 (no key, a malformed, unknown or revoked key) in a minute. */
  readonly unauthorizedRequests: number;
  /** Warnings of the functions' API-key store (a failed refresh, an unreadable key item, no keys) in a minute. */
  readonly keyStoreWarnings: number;
  /** Lambda Errors (crashes and timeouts: handled errors are answered, not thrown) in a minute. */
  readonly lambdaErrors: number;
  readonly lambdaThrottles: number;
  /**
   * Lambda Duration (maximum) as a share of a request's store budget (STORE_BUDGET_MS,
   * lib/store/deadline.ts), percent: a hung or throttled store costs a request that budget, never
   * the function's timeout, so a share of the timeout was never reached (`npm run rehearse`).
   */
  readonly lambdaDurationPercentOfStoreBudget: number;
  /**
   * Lambda ConcurrentExecutions (maximum) of each function: a count where the stage reserves none,
   * else a share of each function's reserved concurrency (past it Lambda throttles).
   */
  readonly lambdaConcurrency: { readonly executions: number } | { readonly percentOfReserved: number };
  /** DynamoDB ThrottledRequests and SystemErrors per table, in a minute. */
  readonly dynamoThrottledRequests: number;
  readonly dynamoSystemErrors: number;
  /**
   * Write capacity units the pets table consumed in a minute (on demand: what it is billed for, and
   * how fast the inventory grows). A create of a pet under 1 KB is one unit.
   */
  readonly petsWriteCapacityUnits: number;
  /** Requests the web ACL blocked (403 or 429) in a minute, when the stage has one. */
  readonly wafBlockedRequests: number;
}

export interface WebAclSettings {
  /**
   * Requests one source address may send in any 5 minutes; above it the web ACL answers that
   * address 429 until its rate falls back. A tenth of the stage's steady throttle over the window,
   * so no single address can take the stage's capacity from everyone else.
   */
  readonly requestsPerAddressPer5Minutes: number;
  /**
   * Requests one API key (one `Authorization` value) may send in any minute, from any number of
   * addresses; above it the web ACL answers that key 429 until its rate falls back. The hard ceiling
   * behind the usage plan's best-effort `keyLimits`: above the plan's rate and burst (a key that
   * keeps to its plan never meets it), well below the stage's throttle.
   */
  readonly requestsPerKeyPerMinute: number;
}

export const STAGE_SETTINGS: Readonly<Record<Stage, StageSettings>> = {
  staging: {
    stage: 'staging',
    protectData: false,
    logRetention: RetentionDays.TWO_WEEKS,
    throttling: { rateLimit: 20, burstLimit: 40 },
    functionMemoryMiB: 512,
    functionTimeout: Duration.seconds(10),
    corsAllowedOrigins: [],
    alarms: {
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
      api5xxRatePercent: 5,
      api4xxRatePercent: 50,
      apiLatencyP99Ms: 3000,
      apiThrottledRequests: 20,
      unauthorizedRequests: 60,
      keyStoreWarnings: 1,
      lambdaErrors: 5,
      lambdaThrottles: 5,
      lambdaDurationPercentOfStoreBudget: 80,
      // The stage's throttle (20/s) x the longest a request holds a function (a hung store's 2.5 s) is 50,
      // the most one function can reach: 50 fired only if every request hung (npm run rehearse). Half of it.
      lambdaConcurrency: { executions: 25 },
      dynamoThrottledRequests: 20,
      dynamoSystemErrors: 5,
      // Two keys creating at their createPet ceiling (2 a second each), for a minute.
      petsWriteCapacityUnits: 240,
      wafBlockedRequests: 100,
    },
    requireAlarmSubscriber: false,
    alarmEmails: [],
    alarmTopicArns: [],
    // On, as production: staging is a public Regional endpoint too, with keys that reach its data. Turning it off
    // (`false`) saves $13 a month and $0.60 per million requests (docs/deploying.md "Costs").
    // 20 requests/s x 300 s / 10; a key's plan (10/s, burst 20) x 60 s plus a fifth.
    webAcl: { requestsPerAddressPer5Minutes: 600, requestsPerKeyPerMinute: 720 },
    canaryDeploys: false,
    // As production, so that staging runs the same merge.
    statusIndexShards: DEFAULT_STATUS_INDEX_SHARDS,
    // Half the stage's throttle: two keys can still use it all; one cannot.
    keyLimits: { rateLimit: 10, burstLimit: 20, requestsPerDay: 100_000, createPet: { rateLimit: 2, burstLimit: 5 } },
    // Staging deploys into any account, a new one's quota of 10 included.
    reservedConcurrency: false,
    // Staging's data is test data: point-in-time recovery only.
    backup: false,
  },
  production: {
    stage: 'production',
    protectData: true,
    logRetention: RetentionDays.THREE_MONTHS,
    throttling: { rateLimit: 200, burstLimit: 400 },
    functionMemoryMiB: 512,
    functionTimeout: Duration.seconds(10),
    corsAllowedOrigins: [],
    alarms: {
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      api5xxRatePercent: 1,
      api4xxRatePercent: 25,
      apiLatencyP99Ms: 1500,
      apiThrottledRequests: 1,
      unauthorizedRequests: 60,
      keyStoreWarnings: 1,
      lambdaErrors: 1,
      lambdaThrottles: 1,
      lambdaDurationPercentOfStoreBudget: 80,
      lambdaConcurrency: { percentOfReserved: 80 },
      dynamoThrottledRequests: 1,
      dynamoSystemErrors: 1,
      // Two keys creating at their createPet ceiling (5 a second each), for a minute.
      petsWriteCapacityUnits: 600,
      wafBlockedRequests: 50,
    },
    requireAlarmSubscriber: true,
    alarmEmails: [],
    alarmTopicArns: [],
    // 200 requests/s x 300 s / 10; a key's plan (50/s, burst 100) x 60 s plus a fifth.
    webAcl: { requestsPerAddressPer5Minutes: 6_000, requestsPerKeyPerMinute: 3_600 },
    canaryDeploys: true,
    statusIndexShards: DEFAULT_STATUS_INDEX_SHARDS,
    // A quarter of the stage's throttle; a day's quota is 50 rps for about 2.8 hours. Creates: a
    // tenth of that rate (432,000 a day at most, within the same quota).
    keyLimits: { rateLimit: 50, burstLimit: 100, requestsPerDay: 500_000, createPet: { rateLimit: 5, burstLimit: 10 } },
    // 250 in all: docs/operating.md "Capacity" has the arithmetic; the account needs a quota of 260.
    reservedConcurrency: { authorizer: 50, operations: { listPets: 100, createPet: 50, getPet: 50 } },
    // Daily, kept 35 days: as long as point-in-time recovery reaches back, but surviving the table's deletion.
    backup: { retentionDays: 35 },
  },
};

export const removalPolicyFor = (settings: StageSettings): RemovalPolicy =>
  settings.protectData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
