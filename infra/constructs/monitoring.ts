/**
 * The stage's alarms and dashboard, from the metrics API Gateway, Lambda, DynamoDB and WAF publish
 * anyway, plus four from our logs: throttled and unauthorized (401) requests (access log), cold
 * starts (request log) and the API-key store's warnings (the functions' logs).
 * Thresholds come from the stage settings; every alarm notifies the stage's SNS topic, which the
 * `AlarmEmail` parameter (required where the stage settings say so) and `alarmEmails` subscribe to.
 */
import { CfnCondition, CfnParameter, Duration, Fn, Stack, Validations } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { API_STAGE_NAME, routes, type OperationName, type Route } from '../../lib/domain/routes.ts';
import { pascal } from '../names.ts';
import type { StageSettings } from '../stages.ts';
import { Concern } from './concern.ts';
import { FIREWALL_RULES, type Firewall } from './firewall.ts';
import type { Functions } from './functions.ts';

const PERIOD = Duration.minutes(1);
/** Every operation a function of ours can run on a table, for the tables' per-operation metrics. */
const TABLE_OPERATIONS = [
  dynamodb.Operation.GET_ITEM,
  dynamodb.Operation.PUT_ITEM,
  dynamodb.Operation.UPDATE_ITEM,
  dynamodb.Operation.DELETE_ITEM,
  dynamodb.Operation.QUERY,
  dynamodb.Operation.SCAN,
];

export interface MonitoringProps {
  readonly settings: StageSettings;
  readonly api: apigw.RestApi;
  readonly accessLogs: logs.ILogGroup;
  readonly functions: Functions;
  readonly tables: Readonly<Record<string, dynamodb.Table>>;
  /** The stage's web ACL, when it has one. */
  readonly firewall?: Firewall | undefined;
}

/** The stack parameter that subscribes an address to the alarms at deploy time. */
export const ALARM_EMAIL_PARAMETER = 'AlarmEmail';
/** An e-mail address, loosely (SNS checks it for real: the address must confirm the subscription). */
export const EMAIL_PATTERN = '[^@\\s]+@[^@\\s]+\\.[^@\\s]+';
/** CloudWatch takes at most 5 actions per alarm state: the stage topic and 4 more. */
const MAX_EXTRA_TOPICS = 4;

interface AlarmSpec {
  readonly id: string;
  /** What is measured, for the alarm's description. */
  readonly what: string;
  readonly metric: cloudwatch.IMetric;
  /** The alarm fires at or above it. */
  readonly threshold: number;
  readonly unit: string;
}

export class Monitoring extends Concern {
  readonly topic: sns.Topic;
  /** The `AlarmEmail` parameter: required (no default) where the stage settings say so. */
  readonly alarmEmail: CfnParameter;
  readonly dashboard: cloudwatch.Dashboard;
  /** Every alarm, by construct id. */
  readonly alarms = new Map<string, cloudwatch.Alarm>();
  readonly #props: MonitoringProps;
  readonly #api5xx: cloudwatch.Alarm;
  readonly #throttled: cloudwatch.IMetric;
  readonly #byOperation = new Map<OperationName, cloudwatch.Alarm[]>();
  /** Where every alarm and its return to OK go: the stage topic, then `alarmTopicArns`. */
  readonly #actions: SnsAction[];

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.#props = props;
    this.topic = this.#topic();
    this.alarmEmail = this.#alarmEmail();
    this.#actions = [this.topic, ...extraTopics(this, props.settings)].map((topic) => new SnsAction(topic));
    this.#throttled = this.#throttledRequests();
    this.#api5xx = this.#apiAlarms();
    for (const route of routes) this.#functionAlarms(route);
    for (const [name, table] of Object.entries(props.tables)) this.#tableAlarms(name, table);
    if (props.firewall) this.#firewallAlarms(props.firewall);
    this.dashboard = this.#dashboard();
  }

  /** Returns the 5xx rate alarm, which also guards every canary. */
  #apiAlarms(): cloudwatch.Alarm {
    const t = this.#props.settings.alarms;
    const average = { statistic: 'Average', period: PERIOD };
    this.#alarm({
      id: 'Api4xxRateAlarm',
      what: 'Share of API requests answered 4xx',
      metric: percent(this.stageMetric('4XXError', average)),
      threshold: t.api4xxRatePercent,
      unit: '%',
    });
    this.#alarm({
      id: 'UnauthorizedAlarm',
      what: 'Requests answered 401 (no key, or a malformed, unknown or revoked one)',
      metric: this.#unauthorizedRequests(),
      threshold: t.unauthorizedRequests,
      unit: 'requests',
    });
    this.#alarm({
      id: 'KeyStoreWarningsAlarm',
      what: "Warnings of the functions' API-key store (refresh failed, key item unreadable, no keys)",
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
    return this.#alarm({
      id: 'Api5xxRateAlarm',
      what: 'Share of API requests answered 5xx',
      metric: percent(this.stageMetric('5XXError', average)),
      threshold: t.api5xxRatePercent,
      unit: '%',
    });
  }

  #functionAlarms(route: Route): void {
    const { settings } = this.#props;
    const t = settings.alarms;
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
        threshold: (settings.functionTimeout.toMilliseconds() * t.lambdaDurationPercentOfTimeout) / 100,
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
      threshold: t.lambdaConcurrentExecutions,
      unit: 'executions',
    });
  }

  #tableAlarms(tableName: string, table: dynamodb.Table): void {
    const t = this.#props.settings.alarms;
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

  #firewallAlarms(firewall: Firewall): void {
    this.#alarm({
      id: 'WafBlockedAlarm',
      what: 'Requests the web ACL blocked (429 rate limit per address, 400/413 body limits, 403 managed rules)',
      metric: firewall.metric('BlockedRequests'),
      threshold: this.#props.settings.alarms.wafBlockedRequests,
      unit: 'requests',
    });
  }

  /** The alarms that roll a canary of `operation` back: API 5xx rate, its latency, errors and duration. */
  rollbackAlarms(operation: OperationName): cloudwatch.Alarm[] {
    return this.#byOperation.get(operation) ?? [];
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
      dimensionsMap: { ApiName: this.#props.api.restApiName, Stage: API_STAGE_NAME, Method: route.method, Resource: route.path },
      statistic,
      period: PERIOD,
      label: `${route.operation} ${statistic}`,
    });
  }

  #alarm({ id, what, metric, threshold, unit }: AlarmSpec): cloudwatch.Alarm {
    const { stage, alarms } = this.#props.settings;
    const alarm = new cloudwatch.Alarm(this, id, {
      alarmName: `petstore-${stage}-${id.replace(/Alarm$/, '')}`,
      alarmDescription: `${what} at or above ${threshold} ${unit} (${stage}). See docs/operating.md, "Alarms".`,
      metric,
      threshold,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: alarms.evaluationPeriods,
      datapointsToAlarm: alarms.datapointsToAlarm,
      // No traffic is no news: a quiet minute never raises an alarm.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(...this.#actions);
    alarm.addOkAction(...this.#actions);
    this.alarms.set(id, alarm);
    return alarm;
  }

  #topic(): sns.Topic {
    const { stage, alarmEmails } = this.#props.settings;
    const topic = new sns.Topic(this, 'AlarmTopic', { displayName: `Pet Store ${stage} alarms`, enforceSSL: true });
    for (const email of alarmEmails) {
      if (!new RegExp(`^${EMAIL_PATTERN}$`).test(email)) throw new Error(`alarmEmails of ${stage}: "${email}" is not an e-mail address`);
      topic.addSubscription(new EmailSubscription(email));
    }
    Validations.of(topic).acknowledge({
      id: 'AwsSolutions-SNS2',
      reason:
        'The topic carries only alarm state changes (alarm names, metric values), no data of the service. ' +
        'CloudWatch cannot publish to a topic encrypted with the AWS-managed SNS key, and a customer key ' +
        '(with a key policy for CloudWatch) costs more than the notifications are worth protecting.',
    });
    return topic;
  }

  /**
   * A deploy-time subscriber, so that no address need be committed. Where the stage requires a
   * subscriber and the settings name none, the parameter has no default: CloudFormation (and `cdk
   * deploy` before it) refuses to deploy without a value, and the pattern refuses an empty one. A
   * synth needs no value, so tests and newcomers never give one.
   */
  #alarmEmail(): CfnParameter {
    const { stage, requireAlarmSubscriber, alarmEmails, alarmTopicArns } = this.#props.settings;
    const required = requireAlarmSubscriber && alarmEmails.length === 0 && alarmTopicArns.length === 0;
    const parameter = new CfnParameter(this, ALARM_EMAIL_PARAMETER, {
      type: 'String',
      description:
        `E-mail address that gets the ${stage} alarms (it must confirm the subscription once). ` +
        (required
          ? `Required: cdk deploy ${Stack.of(this).stackName} --parameters ${ALARM_EMAIL_PARAMETER}=ops@example.com (later deploys keep it).`
          : 'Optional: empty for none.'),
      allowedPattern: required ? `^${EMAIL_PATTERN}$` : `^(${EMAIL_PATTERN})?$`,
      constraintDescription: required
        ? `must be the e-mail address that gets the ${stage} alarms, e.g. --parameters ${ALARM_EMAIL_PARAMETER}=ops@example.com`
        : 'must be an e-mail address, or empty',
      ...(required ? {} : { default: '' }),
    });
    const subscription = new sns.Subscription(this, `${ALARM_EMAIL_PARAMETER}Subscription`, {
      topic: this.topic,
      protocol: sns.SubscriptionProtocol.EMAIL,
      endpoint: parameter.valueAsString,
    });
    if (!required) {
      const given = new CfnCondition(this, `${ALARM_EMAIL_PARAMETER}Given`, {
        expression: Fn.conditionNot(Fn.conditionEquals(parameter.valueAsString, '')),
      });
      (subscription.node.defaultChild as sns.CfnSubscription).cfnOptions.condition = given;
    }
    return parameter;
  }

  /** Counted from the access log: API Gateway publishes no metric of its own for throttling. */
  #throttledRequests(): cloudwatch.IMetric {
    const filter = new logs.MetricFilter(this, 'ThrottledRequestsFilter', {
      logGroup: this.#props.accessLogs,
      filterPattern: logs.FilterPattern.stringValue('$.errorResponseType', '=', 'THROTTLED'),
      metricNamespace: metricNamespace(this.#props.settings.stage),
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
      metricNamespace: metricNamespace(this.#props.settings.stage),
      metricName: 'UnauthorizedRequests',
      metricValue: '1',
    });
    return filter.metric({ statistic: 'Sum', period: PERIOD });
  }

  /** One metric fed by a filter on every function's log group (each function keeps its own keys). */
  #keyStoreWarnings(): cloudwatch.IMetric {
    const { settings, functions } = this.#props;
    const metricName = 'KeyStoreWarnings';
    for (const route of routes) {
      new logs.MetricFilter(this, `${pascal(route.operation)}KeyStoreWarningsFilter`, {
        logGroup: functions.get(route.operation).logGroup,
        filterPattern: KEY_STORE_WARNING_PATTERN,
        metricNamespace: metricNamespace(settings.stage),
        metricName,
        metricValue: '1',
      });
    }
    return new cloudwatch.Metric({ namespace: metricNamespace(settings.stage), metricName, statistic: 'Sum', period: PERIOD });
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
      metricNamespace: metricNamespace(this.#props.settings.stage),
      metricName: `${pascal(operation)}ColdStarts`,
      metricValue: '1',
    });
    return filter.metric({ statistic: 'Sum', period: PERIOD, label: operation });
  }

  #dashboard(): cloudwatch.Dashboard {
    const { settings, functions, tables, firewall } = this.#props;
    const sum = { statistic: 'Sum', period: PERIOD };
    const count = this.stageMetric('Count', sum);
    const clientErrors = this.stageMetric('4XXError', sum);
    const serverErrors = this.stageMetric('5XXError', sum);
    const lambdas = routes.map((route) => ({ route, fn: functions.get(route.operation).fn }));
    // The stack's tags reach the dashboard too (CloudWatch tags dashboards since June 2026; CfnDashboard
    // carries Tags). cfn-lint 1.51.0's schema still lacks them: accepted in infra/cfnLintAcceptance.ts.
    const dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `petstore-${settings.stage}`,
      defaultInterval: Duration.hours(3),
    });
    const wide = { width: 12, height: 6 };
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Requests per operation',
        ...wide,
        left: routes.map((route) => this.methodMetric(route, 'Count', 'Sum')),
      }),
      new cloudwatch.GraphWidget({
        title: 'Answers by status class',
        ...wide,
        stacked: true,
        left: [
          new cloudwatch.MathExpression({
            expression: 'count - e4 - e5',
            usingMetrics: { count, e4: clientErrors, e5: serverErrors },
            label: '2xx/3xx',
            period: PERIOD,
          }),
          clientErrors.with({ label: '4xx' }),
          serverErrors.with({ label: '5xx' }),
        ],
      }),
    );
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Latency per operation (p50, p99), ms',
        ...wide,
        left: routes.flatMap((route) => [this.methodMetric(route, 'Latency', 'p50'), this.methodMetric(route, 'Latency', 'p99')]),
      }),
      new cloudwatch.GraphWidget({ title: 'Throttled requests (429)', ...wide, left: [this.#throttled] }),
    );
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({ title: 'Lambda cold starts', ...wide, left: routes.map((route) => this.#coldStarts(route.operation)) }),
      new cloudwatch.GraphWidget({
        title: 'Lambda duration (p50, p99), ms',
        ...wide,
        left: lambdas.flatMap(({ route, fn }) => [
          fn.metricDuration({ statistic: 'p50', period: PERIOD, label: `${route.operation} p50` }),
          fn.metricDuration({ statistic: 'p99', period: PERIOD, label: `${route.operation} p99` }),
        ]),
      }),
    );
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Lambda errors, throttles, concurrency',
        ...wide,
        left: lambdas.flatMap(({ route, fn }) => [
          fn.metricErrors({ ...sum, label: `${route.operation} errors` }),
          fn.metricThrottles({ ...sum, label: `${route.operation} throttles` }),
        ]),
        right: lambdas.map(({ route, fn }) =>
          fn.metric('ConcurrentExecutions', { statistic: 'Maximum', period: PERIOD, label: `${route.operation} concurrency` }),
        ),
      }),
    );
    // One graph per table: the per-operation throttle sums of two tables cannot share a graph.
    dashboard.addWidgets(
      ...Object.entries(tables).map(
        ([name, table]) =>
          new cloudwatch.GraphWidget({
            title: `DynamoDB ${name} table: consumed capacity and throttles`,
            ...wide,
            left: [
              table.metricConsumedReadCapacityUnits({ ...sum, label: 'read units' }),
              table.metricConsumedWriteCapacityUnits({ ...sum, label: 'write units' }),
            ],
            right: [table.metricThrottledRequestsForOperations({ operations: TABLE_OPERATIONS, period: PERIOD, label: 'throttled' })],
          }),
      ),
    );
    if (firewall) {
      dashboard.addWidgets(
        new cloudwatch.GraphWidget({
          title: 'Web ACL: allowed and blocked requests',
          ...wide,
          left: [firewall.metric('AllowedRequests', 'ALL', 'allowed'), firewall.metric('BlockedRequests', 'ALL', 'blocked')],
        }),
        new cloudwatch.GraphWidget({
          title: 'Web ACL: blocked and counted per rule',
          ...wide,
          left: Object.values(FIREWALL_RULES).map((rule) => firewall.metric('BlockedRequests', rule, `${rule} blocked`)),
          right: [firewall.metric('CountedRequests', FIREWALL_RULES.common, `${FIREWALL_RULES.common} counted`)],
        }),
      );
    }
    dashboard.addWidgets(
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', width: 24, height: 4, alarms: [...this.alarms.values()] }),
    );
    return dashboard;
  }
}

const metricNamespace = (stage: string): string => `PetStore/${stage}`;

/** An access-log line (its `status` is a quoted string) of a request answered 401. */
export const UNAUTHORIZED_PATTERN = logs.FilterPattern.stringValue('$.status', '=', '401');

/**
 * The starts of the WARN lines the API-key store writes (lib/store/controlTableKeys.ts, through
 * lib/store/cache.ts), each matched with a trailing wildcard. test/infra/monitoring.test.ts holds
 * them to the lines the store really writes.
 */
export const KEY_STORE_WARNING_PREFIXES = ['Could not refresh the API keys', 'Ignoring API key item', 'No API keys in'] as const;
export const KEY_STORE_WARNING_PATTERN = logs.FilterPattern.all(
  logs.FilterPattern.stringValue('$.level', '=', 'WARN'),
  logs.FilterPattern.any(...KEY_STORE_WARNING_PREFIXES.map((prefix) => logs.FilterPattern.stringValue('$.message', '=', `${prefix}*`))),
);

/** The existing topics of `alarmTopicArns`, imported (never created or changed by this stack). */
function extraTopics(scope: Construct, { stage, alarmTopicArns }: StageSettings): sns.ITopic[] {
  if (alarmTopicArns.length > MAX_EXTRA_TOPICS) {
    throw new Error(`alarmTopicArns of ${stage}: at most ${MAX_EXTRA_TOPICS} topics (CloudWatch takes 5 actions per alarm)`);
  }
  return alarmTopicArns.map((arn, index) => sns.Topic.fromTopicArn(scope, `AlarmTopic${index + 1}`, arn));
}

const percent = (metric: cloudwatch.Metric): cloudwatch.IMetric =>
  new cloudwatch.MathExpression({
    expression: 'rate * 100',
    usingMetrics: { rate: metric },
    period: PERIOD,
    label: `${metric.metricName} %`,
  });
