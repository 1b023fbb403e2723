/**
 * Alarms evaluated as CloudWatch documents it ("Evaluating an alarm", "Configuring how CloudWatch
 * alarms treat missing data"), on the rehearsal's simulated clock: every minute, each alarm takes
 * the data points of its evaluation range (one per period, ending now), decides OK, ALARM,
 * INSUFFICIENT_DATA or keeps its state, and on each change records the transition and a
 * notification per action of the new state, as CloudWatch runs them.
 */
import type { AlarmAction, AlarmModel, AlarmState, ComparisonOperator, TreatMissingData } from './alarmModel.ts';
import { evaluateExpression } from './metricMath.ts';
import type { MetricStore } from './metricStore.ts';
import { computeStatistic, isLowSampleCount } from './statistics.ts';

/** CloudWatch evaluates an alarm whose period is a minute or more once a minute. */
export const EVALUATION_INTERVAL_MS = 60_000;

/**
 * The periods an evaluation retrieves, N plus extra ones in case recent points are missing. AWS
 * publishes no formula ("depends on the length of the alarm period"); its worked examples use a
 * range of 5 for 3 evaluation periods, so the range here is N + 2.
 */
export const evaluationRange = (evaluationPeriods: number) => evaluationPeriods + 2;

/** One period's data point, as the alarm judges it. */
export type PointClass = 'breaching' | 'notBreaching' | 'missing';
/** What one evaluation decides: a state, or keep the current one. */
export type Outcome = AlarmState | 'retain';

export interface EvaluationRule {
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm: number;
  readonly treatMissingData: TreatMissingData;
}

/**
 * The state the evaluation range's points (oldest first, as AWS's tables print them) lead to:
 * - at least N real points: the newest N decide, M of them breaching is ALARM (missing data moot);
 * - no real point: `missing` INSUFFICIENT_DATA, `ignore` keeps the state, `breaching` ALARM,
 *   `notBreaching` OK;
 * - fewer than N: every real point counts, and the N - real shortfall is filled per TreatMissingData
 *   (`breaching` adds breaching points, `notBreaching` good ones); `missing` and `ignore` judge the
 *   real points alone, except the "premature alarm" rule: when every real point breaches and the
 *   oldest is at least M periods old, `missing` goes to ALARM and `ignore` keeps the state.
 */
export function decideState(points: readonly PointClass[], rule: EvaluationRule): Outcome {
  const { evaluationPeriods: n, datapointsToAlarm: m, treatMissingData } = rule;
  // Newest first, with the age of each (1 = the period that just ended).
  const real = points
    .map((point, index) => ({ point, age: points.length - index }))
    .filter(({ point }) => point !== 'missing')
    .reverse();
  const breachingOf = (list: typeof real) => list.filter(({ point }) => point === 'breaching').length;
  const judge = (breaching: number): AlarmState => (breaching >= m ? 'ALARM' : 'OK');
  if (real.length >= n) return judge(breachingOf(real.slice(0, n)));
  if (real.length === 0) {
    if (treatMissingData === 'missing') return 'INSUFFICIENT_DATA';
    if (treatMissingData === 'ignore') return 'retain';
    return treatMissingData === 'breaching' ? 'ALARM' : 'OK';
  }
  const breaching = breachingOf(real);
  if (treatMissingData === 'breaching') return judge(breaching + n - real.length);
  if (treatMissingData === 'notBreaching' || breaching >= m) return judge(breaching);
  const premature = breaching === real.length && real.at(-1)!.age >= m;
  if (!premature) return 'OK';
  return treatMissingData === 'missing' ? 'ALARM' : 'retain';
}

export interface AlarmTransition {
  readonly logicalId: string;
  readonly alarmName: string;
  /** Simulated time of the evaluation (epoch ms). */
  readonly at: number;
  readonly from: AlarmState;
  readonly to: AlarmState;
  /** The evaluation range's values, oldest first (undefined: no data point), and how they were judged. */
  readonly datapoints: readonly (number | undefined)[];
  readonly reason: string;
}

/** An action CloudWatch ran on a transition: the state entered and the target (a topic). */
export interface AlarmNotification {
  readonly logicalId: string;
  readonly alarmName: string;
  readonly at: number;
  readonly state: AlarmState;
  readonly action: AlarmAction;
}

/**
 * Evaluates alarms over a metric store. Every alarm starts INSUFFICIENT_DATA; call `tick(now)` at
 * each simulated minute (or `run(from, to)`), with `now` never going back. `transitions` and
 * `notifications` hold everything since the start.
 */
export class AlarmEvaluator {
  readonly transitions: AlarmTransition[] = [];
  readonly notifications: AlarmNotification[] = [];
  readonly #states = new Map<string, AlarmState>();
  #lastTick = Number.NEGATIVE_INFINITY;

  constructor(
    readonly alarms: readonly AlarmModel[],
    private readonly store: MetricStore,
  ) {
    for (const alarm of alarms) this.#states.set(alarm.logicalId, 'INSUFFICIENT_DATA');
  }

  /** The alarm's current state (by logical id). */
  state(logicalId: string): AlarmState {
    const state = this.#states.get(logicalId);
    if (state === undefined) throw new Error(`No alarm ${logicalId} is evaluated here.`);
    return state;
  }

  /** Evaluates every alarm with its range ending at `now` (epoch ms); returns this tick's transitions. */
  tick(now: number): AlarmTransition[] {
    if (now < this.#lastTick) throw new Error(`The clock went back: ${now} after ${this.#lastTick}.`);
    this.#lastTick = now;
    const changes: AlarmTransition[] = [];
    for (const alarm of this.alarms) {
      const transition = this.evaluate(alarm, now);
      if (transition) changes.push(transition);
    }
    return changes;
  }

  /** Ticks every EVALUATION_INTERVAL_MS from `from` to `to` (both included); returns the transitions. */
  run(from: number, to: number): AlarmTransition[] {
    const changes: AlarmTransition[] = [];
    for (let now = from; now <= to; now += EVALUATION_INTERVAL_MS) changes.push(...this.tick(now));
    return changes;
  }

  private evaluate(alarm: AlarmModel, now: number): AlarmTransition | undefined {
    const periods = alarmDatapoints(alarm, this.store, now);
    const points = periods.map(({ value }) => classify(value, alarm.comparisonOperator, alarm.threshold));
    const outcome = lowSampleKeepsState(alarm, periods) ? 'retain' : decideState(points, alarm);
    const from = this.state(alarm.logicalId);
    if (outcome === 'retain' || outcome === from) return undefined;
    const datapoints = periods.map(({ value }) => value);
    const reason = `${alarm.alarmName}: [${datapoints.map((value) => value ?? '-').join(', ')}] (oldest first) against ${alarm.comparisonOperator} ${alarm.threshold}, ${alarm.datapointsToAlarm} of ${alarm.evaluationPeriods}, missing data ${alarm.treatMissingData}`;
    const transition = {
      logicalId: alarm.logicalId,
      alarmName: alarm.alarmName,
      at: now,
      from,
      to: outcome,
      datapoints,
      reason,
    };
    this.#states.set(alarm.logicalId, outcome);
    this.transitions.push(transition);
    if (alarm.actionsEnabled) {
      for (const action of alarm.actions[outcome]) {
        this.notifications.push({
          logicalId: alarm.logicalId,
          alarmName: alarm.alarmName,
          at: now,
          state: outcome,
          action,
        });
      }
    }
    return transition;
  }
}

interface PeriodPoint {
  readonly value: number | undefined;
  /** Some percentile the alarm reads had too few values in this period (EvaluateLowSampleCountPercentile). */
  readonly lowSample: boolean;
}

/** The alarm's data point in each period of its evaluation range ending at `now`, oldest first. */
export function alarmDatapoints(alarm: AlarmModel, store: MetricStore, now: number): PeriodPoint[] {
  const periodMs = alarm.periodSeconds * 1000;
  const range = evaluationRange(alarm.evaluationPeriods);
  return Array.from({ length: range }, (_, index) => {
    const end = now - (range - 1 - index) * periodMs;
    return periodPoint(alarm, store, end - periodMs, end);
  });
}

function periodPoint(alarm: AlarmModel, store: MetricStore, start: number, end: number): PeriodPoint {
  let lowSample = false;
  const valueOfId = (id: string): number | undefined => {
    const query = alarm.queries.get(id);
    if (!query) throw new Error(`Alarm ${alarm.logicalId} has no query ${id}.`);
    if (query.kind === 'expression') return evaluateExpression(query.node, valueOfId);
    const values = store.values(query.metric, start, end);
    if (values.length > 0 && isLowSampleCount(query.statistic, values.length)) lowSample = true;
    return computeStatistic(query.statistic, values);
  };
  const value = valueOfId(alarm.returned);
  return { value, lowSample };
}

/**
 * EvaluateLowSampleCountPercentile `ignore`: "the alarm state does not change during periods with
 * too few data points". Applied when any data point the evaluation uses (the newest N real ones)
 * had too few values for its percentile.
 */
function lowSampleKeepsState(alarm: AlarmModel, periods: readonly PeriodPoint[]): boolean {
  if (alarm.evaluateLowSampleCountPercentile !== 'ignore') return false;
  const used = periods.filter(({ value }) => value !== undefined).slice(-alarm.evaluationPeriods);
  return used.some(({ lowSample }) => lowSample);
}

function classify(value: number | undefined, operator: ComparisonOperator, threshold: number): PointClass {
  if (value === undefined) return 'missing';
  const breaching =
    operator === 'GreaterThanOrEqualToThreshold'
      ? value >= threshold
      : operator === 'GreaterThanThreshold'
        ? value > threshold
        : operator === 'LessThanThreshold'
          ? value < threshold
          : value <= threshold;
  return breaching ? 'breaching' : 'notBreaching';
}
