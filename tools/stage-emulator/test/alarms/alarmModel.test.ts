/**
 * Alarms read from a template as CloudWatch would hold them (intrinsics resolved, defaults applied),
 * refused by name when the evaluator cannot evaluate them, and evaluated minute by minute on a
 * simulated clock: transitions with their time, and the new state's actions as notifications.
 */
import { describe, expect, it } from 'vitest';
import type { CfnTemplate } from '../../src/cloudAssembly.ts';
import { AlarmEvaluator, type AlarmModel, MetricStore, readAlarms } from '../../src/alarms/index.ts';

const STACK = 'PetStore-test';
const MINUTE = 60_000;
const TOPIC_ARN = `arn:aws:sns:us-east-1:123456789012:${STACK}-AlarmTopic`;

const base = (extra: Record<string, unknown>) => ({
  Type: 'AWS::CloudWatch::Alarm',
  Properties: {
    ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    EvaluationPeriods: 5,
    DatapointsToAlarm: 3,
    Threshold: 5,
    TreatMissingData: 'notBreaching',
    AlarmActions: [{ Ref: 'AlarmTopic' }],
    OKActions: [{ Ref: 'AlarmTopic' }],
    ...extra,
  },
});
const errorsAlarm = (extra: Record<string, unknown> = {}) =>
  base({
    AlarmName: 'petstore-test-Errors',
    Namespace: 'AWS/Lambda',
    MetricName: 'Errors',
    Dimensions: [{ Name: 'FunctionName', Value: { Ref: 'Handler' } }],
    Period: 60,
    Statistic: 'Sum',
    ...extra,
  });
const metricStat = (id: string, metricName: string, stat: string, extra: Record<string, unknown> = {}) => ({
  Id: id,
  MetricStat: {
    Metric: {
      Namespace: 'AWS/ApiGateway',
      MetricName: metricName,
      Dimensions: [{ Name: 'ApiName', Value: { 'Fn::Join': ['-', ['petstore', 'test']] } }],
    },
    Period: 60,
    Stat: stat,
    ...extra,
  },
  ReturnData: false,
});
const mathAlarm = (expression: string, stat = 'Average', more: unknown[] = []) =>
  base({
    Metrics: [
      { Id: 'expr_1', Expression: expression, ReturnData: true },
      metricStat('rate', '4XXError', stat),
      ...more,
    ],
    Threshold: 50,
  });

function template(alarms: Record<string, unknown>): CfnTemplate {
  return {
    Resources: {
      AlarmTopic: { Type: 'AWS::SNS::Topic', Properties: {} },
      Handler: { Type: 'AWS::Lambda::Function', Properties: { FunctionName: 'petstore-test-listPets' } },
      Table: { Type: 'AWS::DynamoDB::Table', Properties: {} },
      ...(alarms as CfnTemplate['Resources']),
    },
  };
}

const readOne = (alarm: unknown): AlarmModel => {
  const { alarms, refused } = readAlarms({ stackName: STACK, template: template({ TheAlarm: alarm }) });
  expect(refused).toEqual([]);
  return alarms[0]!;
};
const refusal = (alarm: unknown): string => {
  const { alarms, refused } = readAlarms({ stackName: STACK, template: template({ TheAlarm: alarm }) });
  expect(alarms).toEqual([]);
  expect(refused).toHaveLength(1);
  expect(refused[0]!.logicalId).toBe('TheAlarm');
  return refused[0]!.message;
};

describe('reading alarms', () => {
  it('reads a metric alarm with its references resolved as CloudFormation would', () => {
    const alarm = readOne(errorsAlarm());
    expect(alarm).toMatchObject({
      logicalId: 'TheAlarm',
      alarmName: 'petstore-test-Errors',
      periodSeconds: 60,
      comparisonOperator: 'GreaterThanOrEqualToThreshold',
      threshold: 5,
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
      treatMissingData: 'notBreaching',
      evaluateLowSampleCountPercentile: 'evaluate',
      actionsEnabled: true,
      actions: {
        ALARM: [{ arn: TOPIC_ARN, logicalId: 'AlarmTopic' }],
        OK: [{ arn: TOPIC_ARN, logicalId: 'AlarmTopic' }],
        INSUFFICIENT_DATA: [],
      },
    });
    expect(alarm.queries.get(alarm.returned)).toEqual({
      kind: 'metric',
      id: 'metric',
      metric: { namespace: 'AWS/Lambda', metricName: 'Errors', dimensions: { FunctionName: 'petstore-test-listPets' } },
      statistic: { kind: 'Sum', name: 'Sum' },
    });
  });

  it('reads metric math: the expression returned, its MetricStat queries, their period', () => {
    const alarm = readOne(mathAlarm('rate * 100'));
    expect(alarm.returned).toBe('expr_1');
    expect(alarm.periodSeconds).toBe(60);
    expect(alarm.queries.get('expr_1')).toMatchObject({ kind: 'expression', expression: 'rate * 100' });
    expect(alarm.queries.get('rate')).toMatchObject({
      kind: 'metric',
      metric: { namespace: 'AWS/ApiGateway', metricName: '4XXError', dimensions: { ApiName: 'petstore-test' } },
      statistic: { kind: 'Average' },
    });
  });

  it('applies CloudWatch\'s defaults: M = N, missing data "missing" ("ignore" on AWS/DynamoDB), the name from the stack', () => {
    const props = errorsAlarm().Properties as Record<string, unknown>;
    const { DatapointsToAlarm: _m, TreatMissingData: _t, AlarmName: _n, ...rest } = props;
    const alarm = readOne({ Type: 'AWS::CloudWatch::Alarm', Properties: rest });
    expect(alarm).toMatchObject({ datapointsToAlarm: 5, treatMissingData: 'missing', alarmName: `${STACK}-TheAlarm` });
    const dynamo = readOne({
      Type: 'AWS::CloudWatch::Alarm',
      Properties: { ...rest, Namespace: 'AWS/DynamoDB', Dimensions: [{ Name: 'TableName', Value: { Ref: 'Table' } }] },
    });
    expect(dynamo.treatMissingData).toBe('ignore');
    expect(dynamo.queries.get('metric')).toMatchObject({ metric: { dimensions: { TableName: `${STACK}-Table` } } });
  });

  it('reads a percentile as ExtendedStatistic, with EvaluateLowSampleCountPercentile', () => {
    const { Statistic: _s, ...props } = errorsAlarm().Properties as Record<string, unknown>;
    const alarm = readOne({
      Type: 'AWS::CloudWatch::Alarm',
      Properties: { ...props, ExtendedStatistic: 'p99.9', EvaluateLowSampleCountPercentile: 'ignore' },
    });
    expect(alarm.queries.get('metric')).toMatchObject({ statistic: { kind: 'percentile', percentile: 99.9 } });
    expect(alarm.evaluateLowSampleCountPercentile).toBe('ignore');
  });

  it('skips an alarm whose Condition does not hold (it is not deployed)', () => {
    const stack = {
      stackName: STACK,
      template: {
        ...template({ TheAlarm: { ...errorsAlarm(), Condition: 'Never' } }),
        Conditions: { Never: { 'Fn::Equals': ['a', 'b'] } },
      },
    };
    expect(readAlarms(stack)).toEqual({ alarms: [], refused: [] });
  });
});

describe('refused by name, never passed silently', () => {
  it.each([
    [
      'a function in an expression, naming the expression',
      mathAlarm('FILL(rate, 0) * 100'),
      /expression expr_1: "FILL\(rate, 0\) \* 100" uses FILL/,
    ],
    ['an id no query defines', mathAlarm('rate * 100 + other'), /reads other, which no query defines/],
    [
      'an unknown statistic in a MetricStat',
      mathAlarm('rate * 100', 'tm90'),
      /query rate Stat "tm90" is not a statistic/,
    ],
    ['an unknown Statistic', errorsAlarm({ Statistic: 'Median' }), /Statistic "Median" is not a statistic/],
    [
      'an unknown ExtendedStatistic',
      errorsAlarm({ Statistic: undefined, ExtendedStatistic: 'IQM' }),
      /Statistic "IQM" is not a statistic/,
    ],
    ['a Unit filter', errorsAlarm({ Unit: 'Count' }), /it sets Unit, which the evaluator does not read/],
    ['a Metrics Insights query', mathAlarm('SELECT SUM(Errors) FROM "AWS/Lambda"'), /uses SELECT/],
    [
      'two queries returning data',
      mathAlarm('rate * 100', 'Average', [{ Id: 'e2', Expression: 'rate', ReturnData: true }]),
      /2 queries return data \(expr_1, e2\)/,
    ],
    [
      'metrics of different periods',
      mathAlarm('rate + other', 'Average', [metricStat('other', '5XXError', 'Average', { Period: 300 })]),
      /periods 60, 300/,
    ],
    [
      'a comparison with a band',
      errorsAlarm({ ComparisonOperator: 'GreaterThanUpperThreshold' }),
      /ComparisonOperator "GreaterThanUpperThreshold" is not one of/,
    ],
    ['an unknown TreatMissingData', errorsAlarm({ TreatMissingData: 'zero' }), /TreatMissingData "zero"/],
    [
      'more datapoints to alarm than periods',
      errorsAlarm({ DatapointsToAlarm: 6 }),
      /DatapointsToAlarm 6 exceeds EvaluationPeriods 5/,
    ],
    [
      'a reference the template cannot resolve',
      errorsAlarm({ Dimensions: [{ Name: 'FunctionName', Value: { Ref: 'Gone' } }] }),
      /No resource or parameter Gone/,
    ],
  ])('%s', (_what, alarm, message) => {
    const text = refusal(alarm);
    expect(text).toMatch(/^Alarm TheAlarm \(.+\) cannot be evaluated offline: /);
    expect(text).toMatch(message);
  });

  it('anomaly detection: a band threshold, naming the alarm and its expression', () => {
    const alarm = base({
      Metrics: [
        { Id: 'm1', MetricStat: metricStat('m1', 'Latency', 'Average').MetricStat, ReturnData: true },
        { Id: 'ad1', Expression: 'ANOMALY_DETECTION_BAND(m1, 2)' },
      ],
      ThresholdMetricId: 'ad1',
      ComparisonOperator: 'GreaterThanUpperThreshold',
      Threshold: undefined,
    });
    expect(refusal(alarm)).toMatch(
      /^Alarm TheAlarm .* the band ad1 \("ANOMALY_DETECTION_BAND\(m1, 2\)"\): anomaly detection is not evaluated offline/,
    );
  });

  it('a composite alarm', () => {
    const composite = {
      Type: 'AWS::CloudWatch::CompositeAlarm',
      Properties: { AlarmName: 'both', AlarmRule: 'ALARM(a) AND ALARM(b)' },
    };
    expect(refusal(composite)).toMatch(
      /^Alarm TheAlarm \(both\) cannot be evaluated offline: a composite alarm \(AlarmRule "ALARM\(a\) AND ALARM\(b\)"\)/,
    );
  });

  it('reads the alarms it can beside those it refuses', () => {
    const { alarms, refused } = readAlarms({
      stackName: STACK,
      template: template({ Good: errorsAlarm(), Bad: mathAlarm('FILL(rate, 0)') }),
    });
    expect(alarms.map(({ logicalId }) => logicalId)).toEqual(['Good']);
    expect(refused.map(({ logicalId }) => logicalId)).toEqual(['Bad']);
  });
});

describe('evaluating on the simulated clock', () => {
  const START = Date.UTC(2030, 0, 1);
  const at = (minute: number, second = 1) => START + minute * MINUTE + second * 1000;

  it('starts INSUFFICIENT_DATA, goes OK, then ALARM on the 3rd breaching minute of 5, and OK again; each with its topic notified', () => {
    const store = new MetricStore({ now: () => START });
    const alarm = readOne(errorsAlarm());
    const metric = (alarm.queries.get('metric') as { metric: Parameters<MetricStore['put']>[0] }).metric;
    for (const minute of [2, 4, 6]) for (let error = 0; error < 5; error++) store.putAt(metric, 1, at(minute));
    for (const minute of [3, 5]) store.putAt(metric, 4, at(minute));
    const evaluator = new AlarmEvaluator([alarm], store);
    expect(evaluator.state('TheAlarm')).toBe('INSUFFICIENT_DATA');
    evaluator.run(START + MINUTE, START + 20 * MINUTE);
    expect(evaluator.transitions.map(({ from, to, at: when }) => [from, to, (when - START) / MINUTE])).toEqual([
      ['INSUFFICIENT_DATA', 'OK', 1],
      ['OK', 'ALARM', 7],
      ['ALARM', 'OK', 10],
    ]);
    expect(evaluator.transitions[1]!.datapoints).toEqual([undefined, undefined, 5, 4, 5, 4, 5]);
    expect(
      evaluator.notifications.map(({ state, action, at: when }) => [state, action.arn, (when - START) / MINUTE]),
    ).toEqual([
      ['OK', TOPIC_ARN, 1],
      ['ALARM', TOPIC_ARN, 7],
      ['OK', TOPIC_ARN, 10],
    ]);
  });

  it('ActionsEnabled false: the transitions happen, nothing is notified', () => {
    const evaluator = new AlarmEvaluator(
      [readOne(errorsAlarm({ ActionsEnabled: false }))],
      new MetricStore({ now: () => START }),
    );
    evaluator.tick(START);
    expect(evaluator.transitions).toHaveLength(1);
    expect(evaluator.notifications).toEqual([]);
  });

  it('rate * 100 over the 4XXError average: ALARM at half the requests answered 4xx, no data point in minutes without requests', () => {
    const store = new MetricStore({ now: () => START });
    const alarm = readOne(mathAlarm('rate * 100'));
    const metric = (alarm.queries.get('rate') as { metric: Parameters<MetricStore['put']>[0] }).metric;
    for (const minute of [1, 2, 3]) for (const value of [1, 0]) store.putAt(metric, value, at(minute));
    const evaluator = new AlarmEvaluator([alarm], store);
    evaluator.run(START + MINUTE, START + 4 * MINUTE);
    expect(evaluator.transitions.map(({ to, at: when }) => [to, (when - START) / MINUTE])).toEqual([
      ['OK', 1],
      ['ALARM', 4],
    ]);
    expect(evaluator.transitions[1]!.datapoints).toEqual([undefined, undefined, undefined, undefined, 50, 50, 50]);
  });

  it('a p99 with too few samples keeps its state under EvaluateLowSampleCountPercentile ignore, and is judged under evaluate', () => {
    const { Statistic: _s, ...props } = errorsAlarm({ Threshold: 3000, DatapointsToAlarm: 1, EvaluationPeriods: 1 })
      .Properties as Record<string, unknown>;
    const alarmWith = (low: string) =>
      readOne({
        Type: 'AWS::CloudWatch::Alarm',
        Properties: { ...props, ExtendedStatistic: 'p99', EvaluateLowSampleCountPercentile: low },
      });
    for (const [low, expected] of [
      ['ignore', 'INSUFFICIENT_DATA'],
      ['evaluate', 'ALARM'],
    ] as const) {
      const alarm = alarmWith(low);
      const store = new MetricStore({ now: () => START });
      const metric = (alarm.queries.get('metric') as { metric: Parameters<MetricStore['put']>[0] }).metric;
      for (let request = 0; request < 999; request++) store.putAt(metric, request < 20 ? 9000 : 100, at(0));
      const evaluator = new AlarmEvaluator([alarm], store);
      evaluator.tick(START + MINUTE);
      expect(evaluator.state('TheAlarm'), low).toBe(expected);
      for (let request = 0; request < 1000; request++) store.putAt(metric, 9000, at(1));
      evaluator.tick(START + 2 * MINUTE);
      expect(evaluator.state('TheAlarm'), `${low}, 1000 samples`).toBe('ALARM');
    }
  });
});
