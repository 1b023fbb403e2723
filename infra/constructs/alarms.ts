/**
 * How every alarm of a stage is made: on 1-minute periods, firing at or above its threshold for the
 * stage's `datapointsToAlarm` of `evaluationPeriods` (a quiet minute never counts), named
 * `petstore-<stage>-<name>`, notifying the stage's topics on alarm and on OK. Thresholds come from
 * the stage settings (infra/stages.ts); docs/operating.md "Alarms" lists them.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Construct } from 'constructs';
import type { OperationName } from '../../lib/domain/routes.ts';
import { reservedFor, type StageSettings } from '../stages.ts';

export const PERIOD = Duration.minutes(1);

/** The namespace of the metrics our log filters publish. */
export const metricNamespace = (stage: string): string => `PetStore/${stage}`;

export interface AlarmSpec {
  readonly id: string;
  /** What is measured, for the alarm's description. */
  readonly what: string;
  readonly metric: cloudwatch.IMetric;
  /** The alarm fires at or above it. */
  readonly threshold: number;
  readonly unit: string;
}

/** A stage's alarms, by construct id, each made the one way. */
export class StageAlarms {
  readonly byId = new Map<string, cloudwatch.Alarm>();

  constructor(
    readonly settings: StageSettings,
    /** Where every alarm and its return to OK go: the stage topic, then `alarmTopicArns`. */
    readonly actions: readonly SnsAction[],
  ) {}

  add(scope: Construct, { id, what, metric, threshold, unit }: AlarmSpec): cloudwatch.Alarm {
    const { stage, alarms } = this.settings;
    const alarm = new cloudwatch.Alarm(scope, id, {
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
    alarm.addAlarmAction(...this.actions);
    alarm.addOkAction(...this.actions);
    this.byId.set(id, alarm);
    return alarm;
  }
}

/**
 * The ConcurrentExecutions threshold of a function (the authorizer or an operation's), from its reserved
 * concurrency and the stage's `alarms.lambdaConcurrency`; a share of a reservation the function lacks is refused at synth.
 */
export function concurrencyThreshold(settings: StageSettings, fn: 'authorizer' | OperationName): number {
  const { stage, alarms } = settings;
  const setting = alarms.lambdaConcurrency;
  if ('executions' in setting) return setting.executions;
  const reserved = reservedFor(settings, fn);
  if (reserved === undefined) {
    throw new Error(
      `alarms.lambdaConcurrency of ${stage} is a share of reserved concurrency, and ${fn === 'authorizer' ? 'the authorizer' : fn} reserves none`,
    );
  }
  return Math.ceil((reserved * setting.percentOfReserved) / 100);
}

/** The Duration (maximum) threshold of every function: the stage's `alarms.lambdaDurationPercentOfTimeout` of its timeout, ms. */
export const durationThreshold = ({ functionTimeout, alarms }: StageSettings): number =>
  (functionTimeout.toMilliseconds() * alarms.lambdaDurationPercentOfTimeout) / 100;
