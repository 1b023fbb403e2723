/**
 * The alarm rehearsal (`npm run rehearse`): the stage run offline with a MetricStore on a simulated
 * clock, a healthy scenario and fault scenarios (./rehearsalScenarios.ts) each driving real HTTP
 * traffic minute by minute, and every alarm of the template evaluated after each simulated minute
 * (./evaluate.ts). Each scenario runs in its own window of simulated time, far from the others', on
 * a fresh evaluator: what one scenario left in the store is out of the next one's evaluation range.
 * The verdict names each alarm that never fires, fires on a healthy day, or cannot be evaluated and
 * is not on the list of what cannot be rehearsed offline.
 */
import type { DeployedApi } from '../deployedApi.ts';
import type { AlarmModel, AlarmRefusedError } from './alarmModel.ts';
import { AlarmEvaluator, EVALUATION_INTERVAL_MS } from './evaluate.ts';
import type { MetricStore } from './metricStore.ts';

/** What cannot be rehearsed offline, by the metric its alarm reads: the WAF is not emulated. */
export const NOT_REHEARSED_OFFLINE: readonly { namespace: string; metricName: string; why: string }[] = [
  { namespace: 'AWS/WAFV2', metricName: 'BlockedRequests', why: 'the web ACL (AWS WAF) is not emulated offline' },
];

/** A clock the rehearsal sets: the stage's metrics are stamped with its time. */
export class SimulatedClock {
  #now: number;
  constructor(start: number) {
    this.#now = start;
  }
  now(): number {
    return this.#now;
  }
  set(time: number): void {
    this.#now = time;
  }
}

/** What a scenario drives its traffic through. */
export interface ScenarioContext {
  readonly api: DeployedApi;
  readonly alarms: readonly AlarmModel[];
}

export interface Scenario {
  readonly name: string;
  /** What the scenario does, for the table's legend. */
  readonly fault: string;
  /** Whether the scenario is meant to fire `alarm` (its row names it when it does). */
  readonly targets: (alarm: AlarmModel) => boolean;
  /** Simulated minutes to run (the alarms' M of N needs at least M). */
  readonly minutes: number;
  /** Before the first minute (issue keys, warm what must be warm). */
  setup?(context: ScenarioContext): Promise<void>;
  /** One simulated minute's traffic; every request answered before it returns. */
  minute(context: ScenarioContext, index: number): Promise<void>;
  /** After the last minute (clear the faults). */
  teardown?(context: ScenarioContext): Promise<void>;
}

/** One scenario's outcome for one alarm: the minute it entered ALARM, and whether a topic was told. */
interface AlarmOutcome {
  readonly minutes: number;
  readonly notified: readonly string[];
}

export interface ScenarioRun {
  readonly scenario: Scenario;
  /** Alarms that reached ALARM, by logical id. */
  readonly fired: ReadonlyMap<string, AlarmOutcome>;
  /** Every alarm's state after the last minute. */
  readonly finalStates: ReadonlyMap<string, string>;
  readonly realMs: number;
}

/** The simulated start of the rehearsal's windows; each window starts an hour after the one before. */
const REHEARSAL_START = Date.UTC(2025, 0, 6, 3, 0, 0);
const WINDOW_MS = 60 * 60_000;
/** Where in its minute the traffic is stamped: strictly inside, never on a tick. */
const STAMP_OFFSET_MS = 30_000;

/** Runs `scenario` in window `index`: a tick before the traffic, then a tick after each minute. */
export async function runScenario(
  scenario: Scenario,
  index: number,
  context: ScenarioContext & { store: MetricStore; clock: SimulatedClock },
): Promise<ScenarioRun> {
  const started = performance.now();
  const start = REHEARSAL_START + index * WINDOW_MS;
  const evaluator = new AlarmEvaluator(context.alarms, context.store);
  // The setup's traffic (keys warmed, items created) half a window before: out of every evaluation range.
  context.clock.set(start - WINDOW_MS / 2);
  await scenario.setup?.(context);
  evaluator.tick(start);
  const fired = new Map<string, AlarmOutcome>();
  try {
    for (let minute = 0; minute < scenario.minutes; minute += 1) {
      const minuteStart = start + minute * EVALUATION_INTERVAL_MS;
      context.clock.set(minuteStart + STAMP_OFFSET_MS);
      await scenario.minute(context, minute);
      for (const transition of evaluator.tick(minuteStart + EVALUATION_INTERVAL_MS)) {
        if (transition.to !== 'ALARM' || fired.has(transition.logicalId)) continue;
        const notified = evaluator.notifications
          .filter(
            ({ logicalId, state, at }) =>
              logicalId === transition.logicalId && state === 'ALARM' && at === transition.at,
          )
          .map(({ action }) => action.logicalId ?? action.arn);
        fired.set(transition.logicalId, { minutes: minute + 1, notified });
      }
    }
  } finally {
    context.clock.set(start + (scenario.minutes + 1) * EVALUATION_INTERVAL_MS);
    await scenario.teardown?.(context);
  }
  const finalStates = new Map(context.alarms.map((alarm) => [alarm.logicalId, evaluator.state(alarm.logicalId)]));
  return { scenario, fired, finalStates, realMs: performance.now() - started };
}

export interface RehearsalRow {
  readonly alarm: string;
  readonly firedBy: string;
  readonly minutesToAlarm: string;
  readonly healthyState: string;
  readonly topicNotified: string;
  /** Why the alarm fails the rehearsal, if it does. */
  readonly failure?: string;
}

/**
 * One row per alarm: the fault scenario that fired it (the one meant to, else the first that did),
 * its minutes to ALARM, its state after the healthy scenario, the topics told; and its failure.
 */
export function rehearsalRows(
  alarms: readonly AlarmModel[],
  refused: readonly AlarmRefusedError[],
  healthy: ScenarioRun,
  faults: readonly ScenarioRun[],
  skipped: readonly Scenario[] = [],
  /** The functions without reserved concurrency, by name. */
  unreserved: ReadonlySet<string> = new Set(),
): RehearsalRow[] {
  const rows = alarms.map((alarm): RehearsalRow => {
    const healthyState = healthy.finalStates.get(alarm.logicalId) ?? '-';
    const offline = notRehearsed(alarm, unreserved);
    const firing = faults.filter((run) => run.fired.has(alarm.logicalId));
    const run = firing.find((candidate) => candidate.scenario.targets(alarm)) ?? firing[0];
    const outcome = run?.fired.get(alarm.logicalId);
    const healthyFired = healthy.fired.has(alarm.logicalId) || healthyState === 'ALARM';
    const notRun = !outcome && skipped.find((scenario) => scenario.targets(alarm));
    const failure = healthyFired
      ? `${alarm.alarmName} fires on the healthy scenario (${healthyState}).`
      : !outcome && !offline && !notRun
        ? `${alarm.alarmName} never fires: no scenario reached its threshold (${alarm.comparisonOperator} ${alarm.threshold}, ${alarm.datapointsToAlarm} of ${alarm.evaluationPeriods}).`
        : undefined;
    return {
      alarm: alarm.alarmName,
      firedBy: run
        ? run.scenario.name
        : offline
          ? `not rehearsed offline: ${offline}`
          : notRun
            ? `not run: ${notRun.name}`
            : 'none',
      minutesToAlarm: outcome ? String(outcome.minutes) : '-',
      healthyState,
      topicNotified: outcome ? (outcome.notified.length > 0 ? `yes (${outcome.notified.join(', ')})` : 'no') : '-',
      ...(failure ? { failure } : {}),
    };
  });
  const refusedRows = refused.map(
    (error): RehearsalRow => ({
      alarm: error.alarmName,
      firedBy: 'cannot be evaluated',
      minutesToAlarm: '-',
      healthyState: '-',
      topicNotified: '-',
      failure: error.message,
    }),
  );
  return [...rows, ...refusedRows];
}

/**
 * Why the alarm cannot be rehearsed offline, if it cannot: it reads the WAF's metric, or the
 * Throttles of a function without reserved concurrency, which Lambda throttles only at the
 * account's concurrency quota (an account's setting, not the template's: none offline).
 */
function notRehearsed(alarm: AlarmModel, unreserved: ReadonlySet<string>): string | undefined {
  for (const query of alarm.queries.values()) {
    if (query.kind !== 'metric') continue;
    const { namespace, metricName, dimensions } = query.metric;
    if (namespace === 'AWS/Lambda' && metricName === 'Throttles' && unreserved.has(dimensions.FunctionName ?? ''))
      return "no reserved concurrency: throttled only at the account's quota";
    const found = NOT_REHEARSED_OFFLINE.find(
      ({ namespace, metricName }) => query.metric.namespace === namespace && query.metric.metricName === metricName,
    );
    if (found) return found.why;
  }
  return undefined;
}

/** The table, one alarm a line, its columns aligned. */
export function formatTable(rows: readonly RehearsalRow[]): string[] {
  const header = [
    'alarm',
    'scenario that fires it',
    'minutes to ALARM',
    'state under healthy traffic',
    'topic notified',
  ];
  const cells = rows.map((row) => [row.alarm, row.firedBy, row.minutesToAlarm, row.healthyState, row.topicNotified]);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((line) => line[column]!.length)));
  const line = (values: readonly string[]) => `| ${values.map((value, i) => value.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...cells.map(line)];
}
