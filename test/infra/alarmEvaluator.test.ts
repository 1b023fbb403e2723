/**
 * The offline alarm evaluator (tools/stage-emulator/src/alarms) reads every alarm of each stage's
 * synthesized template, the WAF's included, without refusing one: the statistics, the percentiles
 * and the two metric math shapes the templates use, with names resolved as deployed.
 */
import { describe, expect, it } from 'vitest';
import { STAGES } from '../../infra/stages.ts';
import { readAlarms } from '../../tools/stage-emulator/src/alarms/index.ts';
import { synthesizedStages } from './templates.ts';

const of = synthesizedStages();

describe.each(STAGES)("the %s template's alarms, read by the offline evaluator", (stage) => {
  const read = () => {
    const s = of(stage);
    return { s, ...readAlarms({ stackName: s.stack.stackName, template: s.json }) };
  };
  const named = (alarms: ReturnType<typeof read>['alarms'], name: string) => {
    const found = alarms.find(({ alarmName }) => alarmName === `petstore-${stage}-${name}`);
    if (!found) throw new Error(`no alarm petstore-${stage}-${name}`);
    return found;
  };

  it('reads every alarm, refusing none', () => {
    const { s, alarms, refused } = read();
    expect(refused.map(({ message }) => message)).toEqual([]);
    expect(alarms.map(({ logicalId }) => logicalId).sort()).toEqual(
      s
        .ofType('AWS::CloudWatch::Alarm')
        .map(([logicalId]) => logicalId)
        .sort(),
    );
    expect(alarms.length).toBeGreaterThanOrEqual(30);
    for (const alarm of alarms) {
      expect(
        alarm.actions.ALARM.map(({ logicalId }) => logicalId),
        alarm.alarmName,
      ).toEqual([expect.stringMatching(/^AlarmTopic/)]);
    }
  });

  it('reads the WAF alarm (not rehearsed offline) with its region resolved', () => {
    const waf = named(read().alarms, 'WafBlocked');
    expect(waf.queries.get(waf.returned)).toMatchObject({
      kind: 'metric',
      metric: {
        namespace: 'AWS/WAFV2',
        metricName: 'BlockedRequests',
        dimensions: { Region: 'us-east-1', Rule: 'ALL', WebACL: `petstore-${stage}` },
      },
      statistic: { kind: 'Sum' },
    });
  });

  it('reads the 4xx rate as `rate * 100` over the 4XXError average, and p99 latency as a percentile', () => {
    const { alarms } = read();
    const rate = named(alarms, 'Api4xxRate');
    expect(rate.queries.get(rate.returned)).toMatchObject({ kind: 'expression', expression: 'rate * 100' });
    expect(rate.queries.get('rate')).toMatchObject({
      metric: { metricName: '4XXError' },
      statistic: { kind: 'Average' },
    });
    const latency = named(alarms, 'ListPetsLatencyP99');
    expect(latency.queries.get(latency.returned)).toMatchObject({
      metric: { namespace: 'AWS/ApiGateway', metricName: 'Latency', dimensions: { Method: 'GET', Resource: '/pets' } },
      statistic: { kind: 'percentile', percentile: 99 },
    });
  });

  it('reads the DynamoDB throttles as the sum of every operation on the table as deployed', () => {
    const { s, alarms } = read();
    const throttled = named(alarms, 'PetsThrottled');
    const metrics = [...throttled.queries.values()].filter((query) => query.kind === 'metric');
    expect(metrics.map((query) => query.metric.dimensions.Operation)).toEqual([
      'GetItem',
      'PutItem',
      'UpdateItem',
      'DeleteItem',
      'Query',
      'Scan',
    ]);
    const [tableId] = s.ofType('AWS::DynamoDB::Table').find(([id]) => id.startsWith('PetsTable'))!;
    const tableName = String(s.resource(tableId).Properties?.TableName ?? `${s.stack.stackName}-${tableId}`);
    expect(new Set(metrics.map((query) => query.metric.dimensions.TableName))).toEqual(new Set([tableName]));
  });
});
