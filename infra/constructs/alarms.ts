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
import { STORE_BUDGET_MS } from '../../lib/store/deadline.ts';
import { reservedFor, type AlarmThresholds, type ReservedConcurrency, type Stage } from '../stages.ts';

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

/** What a stage's alarms are made from. */
export interface StageAlarmsProps {
  readonly stage: Stage;
  readonly thresholds: AlarmThresholds;
  /** Each function's timeout, which the duration alarms fire near. */
  readonly functionTimeout: Duration;
  /** The stage's reservations, of which the concurrency alarms may fire at a share. */
  readonly reservedConcurrency: ReservedConcurrency | false;
  /** Where every alarm and its return to OK go: the stage topic, then the extra topics. */
  readonly actions: readonly SnsAction[];
}

/** A stage's alarms, by construct id, each made the one way. */
export class StageAlarms {
  readonly byId = new Map<string, cloudwatch.Alarm>();
  readonly #props: StageAlarmsProps;

  constructor(props: StageAlarmsProps) {
    this.#props = props;
  }

  get stage(): Stage {
    return this.#props.stage;
  }

  get thresholds(): AlarmThresholds {
    return this.#props.thresholds;
  }

  add(scope: Construct, { id, what, metric, threshold, unit }: AlarmSpec): cloudwatch.Alarm {
    const { stage, thresholds, actions } = this.#props;
    const alarm = new cloudwatch.Alarm(scope, id, {
      alarmName: `petstore-${stage}-${id.replace(/Alarm$/, '')}`,
      alarmDescription: `${what} at or above ${threshold} ${unit} (${stage}). See docs/operating.md, "Alarms".`,
      metric,
      threshold,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: thresholds.evaluationPeriods,
      datapointsToAlarm: thresholds.datapointsToAlarm,
      // No traffic is no news: a quiet minute never raises an alarm.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(...actions);
    alarm.addOkAction(...actions);
    this.byId.set(id, alarm);
    return alarm;
  }

  /**
   * The ConcurrentExecutions threshold of a function (the authorizer or an operation's), from its reserved
   * concurrency and the stage's `alarms.lambdaConcurrency`; a share of a reservation the function lacks is refused at synth.
   */
  concurrencyThreshold(fn: 'authorizer' | OperationName): number {
    const { stage, thresholds, reservedConcurrency } = this.#props;
    const setting = thresholds.lambdaConcurrency;
    if ('executions' in setting) return setting.executions;
    const reserved = reservedFor({ reservedConcurrency }, fn);
    if (reserved === undefined) {
      throw new Error(
        `alarms.lambdaConcurrency of ${stage} is a share of reserved concurrency, and ${fn === 'authorizer' ? 'the authorizer' : fn} reserves none`,
      );
    }
    return Math.ceil((reserved * setting.percentOfReserved) / 100);
  }

  /**
   * The Duration (maximum) threshold of every function: the stage's `alarms.lambdaDurationPercentOfStoreBudget`
   * of a request's store budget, ms, and never past the function's timeout.
   */
  durationThreshold(): number {
    const { functionTimeout, thresholds } = this.#props;
    const share = (STORE_BUDGET_MS * thresholds.lambdaDurationPercentOfStoreBudget) / 100;
    return Math.min(share, functionTimeout.toMilliseconds());
  }
}
