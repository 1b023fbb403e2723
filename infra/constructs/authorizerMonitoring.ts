/**
 * The key authorizer watched (lib/http/authorizer.ts, ./authorizer.ts): it reads the keys for every
 * request before any function runs, so a failed key read there is an outage of the whole stage.
 * Its Lambda `Errors` cannot tell that apart: every refused key is a thrown `Unauthorized` too. So
 * its real failures are counted from its log instead, from the one ERROR line it writes for each
 * (`"operation":"authorize"`; a refusal writes none), beside its throttles, duration and concurrency.
 * Its key-store warnings feed the stage's KeyStoreWarnings metric (./monitoring.ts).
 */
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { AUTHORIZER_OPERATION } from '../../lib/http/authorizer.ts';
import { IdTransparentGroup } from './idTransparentGroup.ts';
import { PERIOD, metricNamespace, type StageAlarms } from './alarms.ts';
import type { KeyAuthorizer } from './authorizer.ts';

/** The authorizer's failure lines: its ERROR lines (lib/domain/log.ts logError) naming its operation. */
const AUTHORIZER_FAILURE_PATTERN = logs.FilterPattern.all(
  logs.FilterPattern.stringValue('$.level', '=', 'ERROR'),
  logs.FilterPattern.stringValue('$.operation', '=', AUTHORIZER_OPERATION),
);

export interface AuthorizerMonitoringProps {
  readonly alarms: StageAlarms;
  readonly authorizer: KeyAuthorizer;
}

export class AuthorizerMonitoring extends IdTransparentGroup {
  /** Requests the authorizer failed to decide (the key store unreadable or too slow): each answered 503. */
  readonly failures: cloudwatch.Metric;
  /** The alarms of a failing version (its failures, its duration) that roll its canary back (./deployment.ts). */
  readonly rollback: readonly cloudwatch.Alarm[];

  constructor(scope: Construct, id: string, { alarms, authorizer }: AuthorizerMonitoringProps) {
    super(scope, id);
    const t = alarms.thresholds;
    const { fn } = authorizer;
    const sum = { statistic: 'Sum', period: PERIOD };
    const maximum = { statistic: 'Maximum', period: PERIOD };
    this.failures = new logs.MetricFilter(this, 'AuthorizerFailuresFilter', {
      logGroup: authorizer.logGroup,
      filterPattern: AUTHORIZER_FAILURE_PATTERN,
      metricNamespace: metricNamespace(alarms.stage),
      metricName: 'AuthorizerFailures',
      metricValue: '1',
    }).metric(sum);
    const failuresAlarm = alarms.add(this, {
      id: 'AuthorizerFailuresAlarm',
      what: 'Key authorizer failures (key store unreadable or too slow: each request answered 503; refusals not counted)',
      metric: this.failures,
      threshold: t.lambdaErrors,
      unit: 'failures',
    });
    alarms.add(this, {
      id: 'AuthorizerThrottlesAlarm',
      what: 'Key authorizer throttled invocations (each request answered 503)',
      metric: fn.metricThrottles(sum),
      threshold: t.lambdaThrottles,
      unit: 'throttles',
    });
    const durationAlarm = alarms.add(this, {
      id: 'AuthorizerDurationAlarm',
      what: 'Key authorizer maximum duration near its timeout',
      metric: fn.metricDuration(maximum),
      threshold: alarms.durationThreshold(),
      unit: 'ms',
    });
    alarms.add(this, {
      id: 'AuthorizerConcurrencyAlarm',
      what: 'Key authorizer concurrent executions',
      metric: fn.metric('ConcurrentExecutions', maximum),
      threshold: alarms.concurrencyThreshold('authorizer'),
      unit: 'executions',
    });
    this.rollback = [failuresAlarm, durationAlarm];
  }
}
