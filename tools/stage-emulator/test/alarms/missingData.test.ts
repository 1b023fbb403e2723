/**
 * AWS's published table of how alarms treat missing data ("Configuring how CloudWatch alarms treat
 * missing data", section "How alarm state is evaluated when data is missing"), row by row: an
 * evaluation range of 5 data points (newest on the right; 0 not breaching, X breaching, - missing),
 * evaluated 3 out of 3 and 2 out of 3 under each TreatMissingData. "Retain current state" is
 * checked from both states an alarm can hold, and through the evaluator with a real metric store.
 */
import { describe, expect, it } from 'vitest';
import type { AlarmModel, TreatMissingData } from '../../src/alarms/alarmModel.ts';
import { AlarmEvaluator, decideState, type PointClass } from '../../src/alarms/evaluate.ts';
import { MetricStore } from '../../src/alarms/metricStore.ts';

type Expected = 'OK' | 'ALARM' | 'INSUFFICIENT_DATA' | 'retain';
interface Row {
  points: string;
  filled: number;
  missing: Expected;
  ignore: Expected;
  breaching: Expected;
  notBreaching: Expected;
}

/** Datapoints to Alarm 3, Evaluation Periods 3 (the first table). */
const THREE_OF_THREE: Row[] = [
  { points: '0 - X - X', filled: 0, missing: 'OK', ignore: 'OK', breaching: 'OK', notBreaching: 'OK' },
  { points: '0 - - - -', filled: 2, missing: 'OK', ignore: 'OK', breaching: 'OK', notBreaching: 'OK' },
  {
    points: '- - - - -',
    filled: 3,
    missing: 'INSUFFICIENT_DATA',
    ignore: 'retain',
    breaching: 'ALARM',
    notBreaching: 'OK',
  },
  { points: '0 X X - X', filled: 0, missing: 'ALARM', ignore: 'ALARM', breaching: 'ALARM', notBreaching: 'ALARM' },
  { points: '- - X - -', filled: 2, missing: 'ALARM', ignore: 'retain', breaching: 'ALARM', notBreaching: 'OK' },
];

/** Datapoints to Alarm 2, Evaluation Periods 3 (the second table, "2 out of 3"). */
const TWO_OF_THREE: Row[] = [
  { points: '0 - X - X', filled: 0, missing: 'ALARM', ignore: 'ALARM', breaching: 'ALARM', notBreaching: 'ALARM' },
  { points: '0 0 X 0 X', filled: 0, missing: 'ALARM', ignore: 'ALARM', breaching: 'ALARM', notBreaching: 'ALARM' },
  { points: '0 - X - -', filled: 1, missing: 'OK', ignore: 'OK', breaching: 'ALARM', notBreaching: 'OK' },
  { points: '- - - - 0', filled: 2, missing: 'OK', ignore: 'OK', breaching: 'ALARM', notBreaching: 'OK' },
  { points: '- - - X -', filled: 2, missing: 'ALARM', ignore: 'retain', breaching: 'ALARM', notBreaching: 'OK' },
];

const TREATMENTS: TreatMissingData[] = ['missing', 'ignore', 'breaching', 'notBreaching'];
const CLASS: Record<string, PointClass> = { '0': 'notBreaching', X: 'breaching', '-': 'missing' };
const pointsOf = (row: string) => row.split(' ').map((symbol) => CLASS[symbol]!);

const MINUTE = 60_000;
const METRIC = { namespace: 'Test', metricName: 'Errors', dimensions: {} };

/** A 1-minute alarm on Maximum of METRIC >= 1, so 0 is not breaching and 1 is. */
function alarmOf(datapointsToAlarm: number, treatMissingData: TreatMissingData): AlarmModel {
  return {
    logicalId: 'TableAlarm',
    alarmName: 'table-alarm',
    periodSeconds: 60,
    queries: new Map([
      ['metric', { kind: 'metric', id: 'metric', metric: METRIC, statistic: { kind: 'Maximum', name: 'Maximum' } }],
    ]),
    returned: 'metric',
    comparisonOperator: 'GreaterThanOrEqualToThreshold',
    threshold: 1,
    evaluationPeriods: 3,
    datapointsToAlarm,
    treatMissingData,
    evaluateLowSampleCountPercentile: 'evaluate',
    actionsEnabled: true,
    actions: { ALARM: [], OK: [], INSUFFICIENT_DATA: [] },
  };
}

/**
 * The state the evaluator holds after evaluating `row` at minute 10, having first been brought to
 * `before` (ALARM: five breaching minutes; OK: five good ones) at minute 5.
 */
function evaluateRow(row: string, datapointsToAlarm: number, treatment: TreatMissingData, before: 'OK' | 'ALARM') {
  const store = new MetricStore({ now: () => 0 });
  for (let minute = 0; minute < 5; minute++) store.putAt(METRIC, before === 'ALARM' ? 1 : 0, minute * MINUTE);
  pointsOf(row).forEach((point, index) => {
    if (point !== 'missing') store.putAt(METRIC, point === 'breaching' ? 1 : 0, (5 + index) * MINUTE + 1);
  });
  const evaluator = new AlarmEvaluator([alarmOf(datapointsToAlarm, treatment)], store);
  evaluator.tick(5 * MINUTE);
  expect(evaluator.state('TableAlarm')).toBe(before);
  evaluator.tick(10 * MINUTE);
  return evaluator.state('TableAlarm');
}

describe.each([
  { table: '3 out of 3', datapointsToAlarm: 3, rows: THREE_OF_THREE },
  { table: '2 out of 3', datapointsToAlarm: 2, rows: TWO_OF_THREE },
])('AWS table "how alarm state is evaluated when data is missing", $table', ({ datapointsToAlarm, rows }) => {
  describe.each(rows)('data points $points ($filled to fill)', (row) => {
    it.each(TREATMENTS)('treating missing data as %s', (treatment) => {
      const rule = { evaluationPeriods: 3, datapointsToAlarm, treatMissingData: treatment };
      const expected = row[treatment];
      expect(decideState(pointsOf(row.points), rule)).toBe(expected);
      for (const before of ['OK', 'ALARM'] as const) {
        expect(evaluateRow(row.points, datapointsToAlarm, treatment, before)).toBe(
          expected === 'retain' ? before : expected,
        );
      }
    });
  });

  it('fills as many points as the table says: N minus the real points among the newest, at least 0', () => {
    for (const row of rows) {
      const real = pointsOf(row.points).filter((point) => point !== 'missing').length;
      expect(Math.max(0, 3 - real)).toBe(row.filled);
    }
  });
});

describe('beyond the table', () => {
  it('the next evaluation of "0 - - - -" treated as breaching goes to ALARM once the good point leaves the range', () => {
    const rule = { evaluationPeriods: 3, datapointsToAlarm: 3, treatMissingData: 'breaching' as const };
    expect(decideState(pointsOf('- - - - -'), rule)).toBe('ALARM');
  });

  it('"- - - - X" and "- - - X -" do not alarm 3 out of 3 treated as missing (the premature rule needs the breach 3 old)', () => {
    const rule = { evaluationPeriods: 3, datapointsToAlarm: 3, treatMissingData: 'missing' as const };
    expect(decideState(pointsOf('- - - - X'), rule)).toBe('OK');
    expect(decideState(pointsOf('- - - X -'), rule)).toBe('OK');
  });
});
