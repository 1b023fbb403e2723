/**
 * The stage's one CloudWatch dashboard, `petstore-<stage>` (docs/operating.md "Dashboard"): traffic
 * and answers, latency and throttling, the functions (the key authorizer's failures beside their
 * errors), the tables, the web ACL where the stage has one, and every alarm's state. Made in the
 * monitoring construct's scope (./monitoring.ts), from the metrics it defines.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { routes, type OperationName, type Route } from '../../lib/domain/routes.ts';
import { PERIOD } from './alarms.ts';
import { FIREWALL_RULES, type Firewall } from './firewall.ts';

/** Every operation a function of ours can run on a table, for the tables' per-operation metrics. */
export const TABLE_OPERATIONS = [
  dynamodb.Operation.GET_ITEM,
  dynamodb.Operation.PUT_ITEM,
  dynamodb.Operation.UPDATE_ITEM,
  dynamodb.Operation.DELETE_ITEM,
  dynamodb.Operation.QUERY,
  dynamodb.Operation.SCAN,
];

/** What the dashboard graphs, as the monitoring construct defines it. */
export interface DashboardParts {
  readonly stage: string;
  readonly stageMetric: (metricName: string, options: { statistic: string; period: Duration }) => cloudwatch.Metric;
  readonly methodMetric: (route: Route, metricName: string, statistic: string) => cloudwatch.Metric;
  readonly throttled: cloudwatch.IMetric;
  readonly coldStarts: (operation: OperationName) => cloudwatch.IMetric;
  readonly functions: readonly { readonly name: string; readonly fn: IFunction }[];
  readonly authorizerFailures: cloudwatch.Metric;
  readonly tables: Readonly<Record<string, dynamodb.Table>>;
  readonly firewall: Firewall | undefined;
  readonly alarms: readonly cloudwatch.IAlarm[];
}

const WIDE = { width: 12, height: 6 };
const SUM = { statistic: 'Sum', period: PERIOD };

export function stageDashboard(scope: Construct, parts: DashboardParts): cloudwatch.Dashboard {
  // The stack's tags reach the dashboard too (CloudWatch tags dashboards since June 2026; CfnDashboard
  // carries Tags). cfn-lint 1.51.0's schema still lacks them: accepted in infra/cfnLintAcceptance.ts.
  const dashboard = new cloudwatch.Dashboard(scope, 'Dashboard', {
    dashboardName: `petstore-${parts.stage}`,
    defaultInterval: Duration.hours(3),
  });
  dashboard.addWidgets(...trafficRow(parts));
  dashboard.addWidgets(
    new cloudwatch.GraphWidget({
      title: 'Latency per operation (p50, p99), ms',
      ...WIDE,
      left: routes.flatMap((route) => [
        parts.methodMetric(route, 'Latency', 'p50'),
        parts.methodMetric(route, 'Latency', 'p99'),
      ]),
    }),
    new cloudwatch.GraphWidget({ title: 'Throttled requests (429)', ...WIDE, left: [parts.throttled] }),
  );
  dashboard.addWidgets(...functionRows(parts));
  // One graph per table: the per-operation throttle sums of two tables cannot share a graph.
  dashboard.addWidgets(...Object.entries(parts.tables).map(([name, table]) => tableGraph(name, table)));
  if (parts.firewall) dashboard.addWidgets(...firewallRow(parts.firewall));
  dashboard.addWidgets(
    new cloudwatch.AlarmStatusWidget({ title: 'Alarms', width: 24, height: 4, alarms: [...parts.alarms] }),
  );
  return dashboard;
}

function trafficRow({ stageMetric, methodMetric }: DashboardParts): cloudwatch.IWidget[] {
  const count = stageMetric('Count', SUM);
  const clientErrors = stageMetric('4XXError', SUM);
  const serverErrors = stageMetric('5XXError', SUM);
  return [
    new cloudwatch.GraphWidget({
      title: 'Requests per operation',
      ...WIDE,
      left: routes.map((route) => methodMetric(route, 'Count', 'Sum')),
    }),
    new cloudwatch.GraphWidget({
      title: 'Answers by status class',
      ...WIDE,
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
  ];
}

/** Cold starts and duration, then errors, throttles and concurrency: the operations' and the authorizer's. */
function functionRows({ functions, coldStarts, authorizerFailures }: DashboardParts): cloudwatch.IWidget[] {
  return [
    new cloudwatch.GraphWidget({
      title: 'Lambda cold starts',
      ...WIDE,
      left: routes.map((route) => coldStarts(route.operation)),
    }),
    new cloudwatch.GraphWidget({
      title: 'Lambda duration (p50, p99), ms',
      ...WIDE,
      left: functions.flatMap(({ name, fn }) => [
        fn.metricDuration({ statistic: 'p50', period: PERIOD, label: `${name} p50` }),
        fn.metricDuration({ statistic: 'p99', period: PERIOD, label: `${name} p99` }),
      ]),
    }),
    new cloudwatch.GraphWidget({
      title: 'Lambda errors, throttles, concurrency',
      ...WIDE,
      left: [
        ...functions.flatMap(({ name, fn }) => [
          fn.metricErrors({ ...SUM, label: `${name} errors${name === 'authorizer' ? ' (refusals included)' : ''}` }),
          fn.metricThrottles({ ...SUM, label: `${name} throttles` }),
        ]),
        authorizerFailures.with({ label: 'authorizer failures (503s)' }),
      ],
      right: functions.map(({ name, fn }) =>
        fn.metric('ConcurrentExecutions', { statistic: 'Maximum', period: PERIOD, label: `${name} concurrency` }),
      ),
    }),
  ];
}

function tableGraph(name: string, table: dynamodb.Table): cloudwatch.IWidget {
  return new cloudwatch.GraphWidget({
    title: `DynamoDB ${name} table: consumed capacity and throttles`,
    ...WIDE,
    left: [
      table.metricConsumedReadCapacityUnits({ ...SUM, label: 'read units' }),
      table.metricConsumedWriteCapacityUnits({ ...SUM, label: 'write units' }),
    ],
    right: [
      table.metricThrottledRequestsForOperations({ operations: TABLE_OPERATIONS, period: PERIOD, label: 'throttled' }),
    ],
  });
}

function firewallRow(firewall: Firewall): cloudwatch.IWidget[] {
  return [
    new cloudwatch.GraphWidget({
      title: 'Web ACL: allowed and blocked requests',
      ...WIDE,
      left: [
        firewall.metric('AllowedRequests', 'ALL', 'allowed'),
        firewall.metric('BlockedRequests', 'ALL', 'blocked'),
      ],
    }),
    new cloudwatch.GraphWidget({
      title: 'Web ACL: blocked and counted per rule',
      ...WIDE,
      left: Object.values(FIREWALL_RULES).map((rule) => firewall.metric('BlockedRequests', rule, `${rule} blocked`)),
      right: [firewall.metric('CountedRequests', FIREWALL_RULES.common, `${FIREWALL_RULES.common} counted`)],
    }),
  ];
}
