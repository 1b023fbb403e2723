/**
 * The stage's alarms and dashboard, from the metrics API Gateway, Lambda, DynamoDB and WAF publish
 * anyway, plus five from our logs: throttled and unauthorized (401) requests (access log), cold
 * starts (request log), the API-key store's warnings (the functions' and the authorizer's logs) and
 * the key authorizer's failures (./authorizerMonitoring.ts, with its other alarms).
 * Thresholds come from the stage settings; every alarm notifies the stage's SNS topic, which the
 * `AlarmEmail` parameter (required where the stage settings say so) and `alarmEmails` subscribe to
 * (./alarmTopic.ts).
 */
import type { Duration, CfnParameter } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { API_STAGE_NAME, routes, type OperationName, type Route } from '../../lib/domain/routes.ts';
import { pascal } from '../names.ts';
import type { AlarmThresholds, ReservedConcurrency, Stage } from '../stages.ts';
import { alarmEmailParameter, alarmTopic, extraTopics, type AlarmSubscribers } from './alarmTopic.ts';
import { PERIOD, StageAlarms, metricNamespace, type AlarmSpec } from './alarms.ts';
import type { KeyAuthorizer } from './authorizer.ts';
import { AuthorizerMonitoring } from './authorizerMonitoring.ts';
import type { Deployed } from './deployment.ts';
import { IdTransparentGroup } from './idTransparentGroup.ts';
import { TABLE_OPERATIONS, stageDashboard } from './dashboard.ts';
import type { Firewall } from './firewall.ts';
import type { Functions } from './functions.ts';

export { ALARM_EMAIL_PARAMETER } from './alarmTopic.ts';
export interface MonitoringProps {
  readonly stage: Stage;
  readonly thresholds: AlarmThresholds;
  readonly subscribers: AlarmSubscribers;
  /** Each function's timeout, which the duration alarms fire near. */
  readonly functionTimeout: Duration;
  /** The stage's reservations, of which the concurrency alarms may fire at a share. */
  readonly reservedConcurrency: ReservedConcurrency | false;
  readonly api: apigw.RestApi;
  readonly accessLogs: logs.ILogGroup;
  readonly functions: Functions;
  readonly authorizer: KeyAuthorizer;
  /** The pets table (also watched for the write capacity it consumes) and the control table. */
  readonly tables: { readonly pets: dynamodb.Table; readonly control: dynamodb.Table };
  /** The stage's web ACL, when it has one. */
  readonly firewall?: Firewall | undefined;
}

export class Monitoring extends IdTransparentGroup {
  readonly topic: sns.Topic;
  /** The `AlarmEmail` parameter: required (no default) where the stage settings say so. */
  readonly alarmEmail: CfnParameter;
  readonly dashboard: cloudwatch.Dashboard;
  readonly #props: MonitoringProps;
  readonly #alarms: StageAlarms;
  readonly #api5xx: cloudwatch.Alarm;
  readonly #unauthorized: cloudwatch.Alarm;
  readonly #throttled: cloudwatch.IMetric;
  readonly #authorizer: AuthorizerMonitoring;
  readonly #byOperation = new Map<OperationName, cloudwatch.Alarm[]>();

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.#props = props;
    const { stage, subscribers } = props;
    this.topic = alarmTopic(this, stage, subscribers);
    this.alarmEmail = alarmEmailParameter(this, stage, subscribers, this.topic);
    const actions = [this.topic, ...extraTopics(this, stage, subscribers)].map((topic) => new SnsAction(topic));
    this.#alarms = new StageAlarms({
      stage,
      thresholds: props.thresholds,
      functionTimeout: props.functionTimeout,
      reservedConcurrency: props.reservedConcurrency,
      actions,
    });
    this.#throttled = this.#throttledRequests();
    [this.#api5xx, this.#unauthorized] = this.#apiAlarms();
    for (const route of routes) this.#functionAlarms(route);
    this.#authorizer = new AuthorizerMonitoring(this, 'Authorizer', {
      alarms: this.#alarms,
      authorizer: props.authorizer,
    });
    for (const [name, table] of Object.entries(props.tables)) this.#tableAlarms(name, table);
    this.#writeCapacityAlarm(props.tables.pets);
    if (props.firewall) this.#firewallAlarms(props.firewall);
    this.dashboard = this.#dashboard();
  }

  /** Every alarm, by construct id. */
  get alarms(): ReadonlyMap<string, cloudwatch.Alarm> {
    return this.#alarms.byId;
  }

  /** Returns the 5xx rate alarm, which also guards every canary, and the 401 alarm, which guards the authorizer's. */
  #apiAlarms(): [cloudwatch.Alarm, cloudwatch.Alarm] {
    const t = this.#props.thresholds;
    const average = { statistic: 'Average', period: PERIOD };
    this.#alarm({
      id: 'Api4xxRateAlarm',
      what: 'Share of API requests answered 4xx',
      metric: percent(this.stageMetric('4XXError', average)),
      threshold: t.api4xxRatePercent,
      unit: '%',
    });
    const unauthorized = this.#alarm({
      id: 'UnauthorizedAlarm',
      what: 'Requests answered 401 (no key, or a malformed, unknown or revoked one)',
      metric: this.#unauthorizedRequests(),
      threshold: t.unauthorizedRequests,
      unit: 'requests',
    });
    this.#alarm({
      id: 'KeyStoreWarningsAlarm',
      what: "Warnings of the functions' and the authorizer's API-key store (refresh failed, key item unreadable, no keys, last use not recorded)",
      metric: this.#keyStoreWarnings(),
      threshold: t.keyStoreWarnings,
      unit: 'warnings',
    });
    this.#alarm({
      id: 'ApiThrottledAlarm',
      what: 'Requests the API stage throttled (429)',
      metric: this.#throttled,
      threshold: t.apiThrottledRequests,
      unit: 'requests',
    });
    const api5xx = this.#alarm({
      id: 'Api5xxRateAlarm',
      what: 'Share of API requests answered 5xx',
      metric: percent(this.stageMetric('5XXError', average)),
      threshold: t.api5xxRatePercent,
      unit: '%',
    });
    return [api5xx, unauthorized];
  }

  #functionAlarms(route: Route): void {
    const t = this.#props.thresholds;
    const { fn } = this.#props.functions.get(route.operation);
    const name = pascal(route.operation);
    const sum = { statistic: 'Sum', period: PERIOD };
    const maximum = { statistic: 'Maximum', period: PERIOD };
    const rollback = [
      this.#api5xx,
      this.#alarm({
        id: `${name}LatencyP99Alarm`,
        what: `p99 latency of ${route.method} ${route.path}`,
        metric: this.methodMetric(route, 'Latency', 'p99'),
        threshold: t.apiLatencyP99Ms,
        unit: 'ms',
      }),
      this.#alarm({
        id: `${name}ErrorsAlarm`,
        what: `${route.operation} invocation errors (crashes, timeouts)`,
        metric: fn.metricErrors(sum),
        threshold: t.lambdaErrors,
        unit: 'errors',
      }),
      this.#alarm({
        id: `${name}DurationAlarm`,
        what: `${route.operation} maximum duration near its timeout`,
        metric: fn.metricDuration(maximum),
        threshold: this.#alarms.durationThreshold(),
        unit: 'ms',
      }),
    ];
    this.#byOperation.set(route.operation, rollback);
    this.#alarm({
      id: `${name}ThrottlesAlarm`,
      what: `${route.operation} throttled invocations`,
      metric: fn.metricThrottles(sum),
      threshold: t.lambdaThrottles,
      unit: 'throttles',
    });
    this.#alarm({
      id: `${name}ConcurrencyAlarm`,
      what: `${route.operation} concurrent executions`,
      metric: fn.metric('ConcurrentExecutions', maximum),
      threshold: this.#alarms.concurrencyThreshold(route.operation),
      unit: 'executions',
    });
  }

  #tableAlarms(tableName: string, table: dynamodb.Table): void {
    const t = this.#props.thresholds;
    const name = pascal(tableName);
    const everyOperation = { operations: TABLE_OPERATIONS, period: PERIOD };
    this.#alarm({
      id: `${name}ThrottledAlarm`,
      what: `${tableName} table throttled requests`,
      metric: table.metricThrottledRequestsForOperations(everyOperation),
      threshold: t.dynamoThrottledRequests,
      unit: 'requests',
    });
    this.#alarm({
      id: `${name}SystemErrorsAlarm`,
      what: `${tableName} table system errors`,
      metric: table.metricSystemErrorsForOperations(everyOperation),
      threshold: t.dynamoSystemErrors,
      unit: 'errors',
    });
  }

  /**
   * On demand, consumed capacity is what the table bills and how fast the inventory grows: a key
   * creating at its ceiling all day adds 432,000 pets (docs/operating.md "Alarms").
   */
  #writeCapacityAlarm(pets: dynamodb.Table): void {
    this.#alarm({
      id: 'PetsWriteCapacityAlarm',
      what: 'pets table consumed write capacity units',
      metric: pets.metricConsumedWriteCapacityUnits({ statistic: 'Sum', period: PERIOD }),
      threshold: this.#props.thresholds.petsWriteCapacityUnits,
      unit: 'units',
    });
  }

  #firewallAlarms(firewall: Firewall): void {
    this.#alarm({
      id: 'WafBlockedAlarm',
      what: 'Requests the web ACL blocked (429 rate limit per address, 400/413 body limits, 403 managed rules)',
      metric: firewall.metric('BlockedRequests'),
      threshold: this.#props.thresholds.wafBlockedRequests,
      unit: 'requests',
    });
  }

  /**
   * The alarms that roll a canary back: for an operation, the API 5xx rate and its latency, errors
   * and duration; for the key authorizer, the API 5xx rate, its failures and duration, and the 401s
   * (a version that refuses good keys fails that way, not with errors).
   */
  rollbackAlarms(deployed: Deployed): cloudwatch.Alarm[] {
    if (deployed === 'authorizer') return [this.#api5xx, ...this.#authorizer.rollback, this.#unauthorized];
    return this.#byOperation.get(deployed) ?? [];
  }

  /**
   * An API Gateway metric of the whole stage. The dimensions name the API and the stage by their
   * literal names, never by a Ref to the Stage resource: in production each canary's deployment
   * group rolls back on Api5xxRate, the `live` alias waits on that group (UpdatePolicy), every
   * method invokes the alias, and the stage depends on the methods (through its deployment and the
   * documentation version). A Ref from the alarm to the stage closed that loop, and CloudFormation
   * refuses a template with a dependency cycle before creating anything. The literal names are the
   * ones the stack itself sets (restApiName, API_STAGE_NAME), so the metric is the same one.
   */
  stageMetric(metricName: string, options: { statistic: string; period: Duration }): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: 'AWS/ApiGateway',
      metricName,
      dimensionsMap: { ApiName: this.#props.api.restApiName, Stage: API_STAGE_NAME },
      ...options,
    });
  }

  /** An API Gateway metric of one route's method (detailed metrics are on for the stage). */
  methodMetric(route: Route, metricName: string, statistic: string): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: 'AWS/ApiGateway',
      metricName,
      dimensionsMap: {
        ApiName: this.#props.api.restApiName,
        Stage: API_STAGE_NAME,
        Method: route.method,
        Resource: route.path,
      },
      statistic,
      period: PERIOD,
      label: `${route.operation} ${statistic}`,
    });
  }

  #alarm(spec: AlarmSpec): cloudwatch.Alarm {
    return this.#alarms.add(this, spec);
  }

  /** Counted from the access log: API Gateway publishes no metric of its own for throttling. */
  #throttledRequests(): cloudwatch.IMetric {
    const filter = new logs.MetricFilter(this, 'ThrottledRequestsFilter', {
      logGroup: this.#props.accessLogs,
      filterPattern: logs.FilterPattern.stringValue('$.errorResponseType', '=', 'THROTTLED'),
      metricNamespace: metricNamespace(this.#props.stage),
      metricName: 'ThrottledRequests',
      metricValue: '1',
    });
    return filter.metric({ statistic: 'Sum', period: PERIOD });
  }

  /**
   * Counted from the access log, which has every answer whoever gave it: today the functions give
   * the 401s, and a gateway authorizer or WAF rule answering them would still be counted here,
   * where the functions' request log would go quiet. A count, not a share of requests: what a
   * keyless flood or a key-guessing run costs grows with the count, and a share would fire on one
   * stray request in a quiet minute.
   */
  #unauthorizedRequests(): cloudwatch.IMetric {
    const filter = new logs.MetricFilter(this, 'UnauthorizedRequestsFilter', {
      logGroup: this.#props.accessLogs,
      filterPattern: UNAUTHORIZED_PATTERN,
      metricNamespace: metricNamespace(this.#props.stage),
      metricName: 'UnauthorizedRequests',
      metricValue: '1',
    });
    return filter.metric({ statistic: 'Sum', period: PERIOD });
  }

  /** One metric fed by a filter on every function's log group and the authorizer's (each keeps its own keys). */
  #keyStoreWarnings(): cloudwatch.IMetric {
    const { stage, functions, authorizer } = this.#props;
    const metricName = 'KeyStoreWarnings';
    const logGroups: [string, logs.ILogGroup][] = [
      ...routes.map((route): [string, logs.ILogGroup] => [
        pascal(route.operation),
        functions.get(route.operation).logGroup,
      ]),
      ['Authorizer', authorizer.logGroup],
    ];
    for (const [name, logGroup] of logGroups) {
      new logs.MetricFilter(this, `${name}KeyStoreWarningsFilter`, {
        logGroup,
        filterPattern: KEY_STORE_WARNING_PATTERN,
        metricNamespace: metricNamespace(stage),
        metricName,
        metricValue: '1',
      });
    }
    return new cloudwatch.Metric({
      namespace: metricNamespace(stage),
      metricName,
      statistic: 'Sum',
      period: PERIOD,
    });
  }

  /** Counted from the request log (lib/http/requestLog.ts): Lambda publishes no cold-start metric. */
  #coldStarts(operation: OperationName): cloudwatch.IMetric {
    const { logGroup } = this.#props.functions.get(operation);
    const filter = new logs.MetricFilter(this, `${pascal(operation)}ColdStartsFilter`, {
      logGroup,
      filterPattern: logs.FilterPattern.all(
        logs.FilterPattern.stringValue('$.message', '=', 'request'),
        logs.FilterPattern.booleanValue('$.coldStart', true),
      ),
      metricNamespace: metricNamespace(this.#props.stage),
      metricName: `${pascal(operation)}ColdStarts`,
      metricValue: '1',
    });
    return filter.metric({ statistic: 'Sum', period: PERIOD, label: operation });
  }

  #dashboard(): cloudwatch.Dashboard {
    const { stage, functions, authorizer, tables, firewall } = this.#props;
    return stageDashboard(this, {
      stage,
      stageMetric: (name, options) => this.stageMetric(name, options),
      methodMetric: (route, name, statistic) => this.methodMetric(route, name, statistic),
      throttled: this.#throttled,
      coldStarts: (operation) => this.#coldStarts(operation),
      // Each operation's function, then the key authorizer's.
      functions: [
        ...routes.map((route) => ({ name: route.operation as string, fn: functions.get(route.operation).fn })),
        { name: 'authorizer', fn: authorizer.fn },
      ],
      authorizerFailures: this.#authorizer.failures,
      tables,
      firewall,
      alarms: [...this.alarms.values()],
    });
  }
}

/** An access-log line (its `status` is a quoted string) of a request answered 401. */
const UNAUTHORIZED_PATTERN = logs.FilterPattern.stringValue('$.status', '=', '401');

/**
 * The starts of the WARN lines the API-key store writes (lib/store/controlTableKeys.ts, through
 * lib/store/cache.ts; the authorizer's lib/store/keyUses.ts), each matched with a trailing wildcard. test/infra/monitoring.test.ts holds
 * them to the lines the store really writes.
 */
export const KEY_STORE_WARNING_PREFIXES = [
  'Could not refresh the API keys',
  'Ignoring API key item',
  'No API keys in',
  'Could not record the use of API key',
] as const;
const KEY_STORE_WARNING_PATTERN = logs.FilterPattern.all(
  logs.FilterPattern.stringValue('$.level', '=', 'WARN'),
  logs.FilterPattern.any(
    ...KEY_STORE_WARNING_PREFIXES.map((prefix) => logs.FilterPattern.stringValue('$.message', '=', `${prefix}*`)),
  ),
);

const percent = (metric: cloudwatch.Metric): cloudwatch.IMetric =>
  new cloudwatch.MathExpression({
    expression: 'rate * 100',
    usingMetrics: { rate: metric },
    period: PERIOD,
    label: `${metric.metricName} %`,
  });
