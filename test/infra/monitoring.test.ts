/** Alarms, their SNS topic and subscribers, and the dashboard (infra/constructs/monitoring.ts), in both stages. */
import { STORE_BUDGET_MS } from '../../lib/store/deadline.ts';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KEY_STORE_WARNING_PREFIXES } from '../../infra/constructs/monitoring.ts';
import { PetStoreStack } from '../../infra/stack.ts';
import { STAGE_SETTINGS, STAGES, type StageSettings } from '../../infra/stages.ts';
import { routes } from '../../lib/domain/routes.ts';
import { ControlTableApiKeys } from '../../lib/store/controlTableKeys.ts';
import { KeyUses } from '../../lib/store/keyUses.ts';
import { matchesFilterPattern } from '@petstore/stage-emulator/filterPattern';
import { synthesize, testApp } from './synth.ts';
import { alarmNamed, props, ref, synthesizedStages } from './templates.ts';

const of = synthesizedStages();

/** The alarm ids every stage has, with the setting its threshold comes from. */
function expectedAlarms(stage: (typeof STAGES)[number]): Record<string, number> {
  const t = STAGE_SETTINGS[stage].alarms;
  const timeoutMs = STAGE_SETTINGS[stage].functionTimeout.toMilliseconds();
  const pascal = (s: string) => s[0]!.toUpperCase() + s.slice(1);
  const alarms: Record<string, number> = {
    Api5xxRate: t.api5xxRatePercent,
    Api4xxRate: t.api4xxRatePercent,
    ApiThrottled: t.apiThrottledRequests,
    Unauthorized: t.unauthorizedRequests,
    KeyStoreWarnings: t.keyStoreWarnings,
    PetsThrottled: t.dynamoThrottledRequests,
    PetsSystemErrors: t.dynamoSystemErrors,
    ControlThrottled: t.dynamoThrottledRequests,
    ControlSystemErrors: t.dynamoSystemErrors,
    PetsWriteCapacity: t.petsWriteCapacityUnits,
  };
  if (STAGE_SETTINGS[stage].webAcl) alarms.WafBlocked = t.wafBlockedRequests;
  alarms.AuthorizerFailures = t.lambdaErrors;
  alarms.AuthorizerThrottles = t.lambdaThrottles;
  alarms.AuthorizerDuration = Math.min((STORE_BUDGET_MS * t.lambdaDurationPercentOfStoreBudget) / 100, timeoutMs);
  const reserved = STAGE_SETTINGS[stage].reservedConcurrency;
  const concurrency = (reservation: number | undefined) =>
    'executions' in t.lambdaConcurrency
      ? t.lambdaConcurrency.executions
      : Math.ceil((reservation! * t.lambdaConcurrency.percentOfReserved) / 100);
  alarms.AuthorizerConcurrency = concurrency(reserved ? reserved.authorizer : undefined);
  for (const { operation } of routes) {
    const name = pascal(operation);
    alarms[`${name}LatencyP99`] = t.apiLatencyP99Ms;
    alarms[`${name}Errors`] = t.lambdaErrors;
    alarms[`${name}Duration`] = Math.min((STORE_BUDGET_MS * t.lambdaDurationPercentOfStoreBudget) / 100, timeoutMs);
    alarms[`${name}Throttles`] = t.lambdaThrottles;
    alarms[`${name}Concurrency`] = concurrency(reserved ? reserved.operations[operation] : undefined);
  }
  return alarms;
}

describe.each(STAGES)('PetStore-%s monitoring', (stage) => {
  const settings = STAGE_SETTINGS[stage];

  it('has exactly the alarms of docs/operating.md, each with its threshold from infra/stages.ts', () => {
    const s = of(stage);
    const alarms = Object.fromEntries(
      s.ofType('AWS::CloudWatch::Alarm').map(([, alarm]) => {
        const p = props(alarm) as Record<string, any>;
        return [String(p.AlarmName).replace(`petstore-${stage}-`, ''), p.Threshold as number];
      }),
    );
    expect(alarms).toEqual(expectedAlarms(stage));
  });

  it('evaluates every alarm per minute, ignores quiet minutes, and notifies the stage topic on alarm and OK', () => {
    const s = of(stage);
    const [topicId] = s.ofType('AWS::SNS::Topic')[0]!;
    for (const [id, alarm] of s.ofType('AWS::CloudWatch::Alarm')) {
      const p = props(alarm) as Record<string, any>;
      expect(p, id).toMatchObject({
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: settings.alarms.evaluationPeriods,
        DatapointsToAlarm: settings.alarms.datapointsToAlarm,
        TreatMissingData: 'notBreaching',
        AlarmActions: [ref(topicId)],
        OKActions: [ref(topicId)],
      });
      const periods = JSON.stringify(p).match(/"Period":(\d+)/g) ?? [`"Period":${p.Period}`];
      for (const period of periods) expect(period, id).toBe('"Period":60');
    }
  });

  it('watches p99 latency on each route method, and the 5xx rate as a percentage', () => {
    const s = of(stage);
    const alarm = (name: string) => alarmNamed(s, stage, name);
    for (const route of routes) {
      const latency = alarm(`${route.operation[0]!.toUpperCase()}${route.operation.slice(1)}LatencyP99`);
      const [stat] = (latency.Metrics as { MetricStat: { Metric: Record<string, any>; Stat: string } }[]).map(
        (m) => m.MetricStat,
      );
      expect(stat).toMatchObject({ Metric: { Namespace: 'AWS/ApiGateway', MetricName: 'Latency' }, Stat: 'p99' });
      expect(stat!.Metric.Dimensions).toEqual(
        expect.arrayContaining([
          { Name: 'Method', Value: route.method },
          { Name: 'Resource', Value: route.path },
          { Name: 'Stage', Value: 'v1' },
          { Name: 'ApiName', Value: `petstore-${stage}` },
        ]),
      );
    }
    const rate = alarm('Api5xxRate');
    expect(rate.Metrics).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Expression: 'rate * 100' }),
        expect.objectContaining({
          MetricStat: expect.objectContaining({
            Metric: expect.objectContaining({ MetricName: '5XXError' }),
            Stat: 'Average',
          }),
        }),
      ]),
    );
  });

  it('counts throttled requests from the access log and cold starts from the request log', () => {
    const s = of(stage);
    const filters = s.ofType('AWS::Logs::MetricFilter').map(([, f]) => props(f) as Record<string, any>);
    const throttled = filters.find((f) => f.MetricTransformations[0].MetricName === 'ThrottledRequests')!;
    expect(throttled.FilterPattern).toBe('{ $.errorResponseType = "THROTTLED" }');
    expect(throttled.LogGroupName).toEqual(ref(s.logicalId(s.stack.restApi.accessLogs)));
    for (const route of routes) {
      const name = `${route.operation[0]!.toUpperCase()}${route.operation.slice(1)}ColdStarts`;
      const coldStarts = filters.find((f) => f.MetricTransformations[0].MetricName === name)!;
      expect(coldStarts.FilterPattern).toBe('{ ($.message = "request") && ($.coldStart IS TRUE) }');
      expect(coldStarts.LogGroupName).toEqual(ref(s.logicalId(s.stack.functions.get(route.operation).logGroup)));
      expect(coldStarts.MetricTransformations[0].MetricNamespace).toBe(`PetStore/${stage}`);
    }
  });

  it("counts 401 answers from the access log, and the API-key store warnings from every function's log and the authorizer's", () => {
    const s = of(stage);
    const filters = s.ofType('AWS::Logs::MetricFilter').map(([, f]) => props(f) as Record<string, any>);
    const unauthorized = filters.filter((f) => f.MetricTransformations[0].MetricName === 'UnauthorizedRequests');
    expect(unauthorized).toHaveLength(1);
    expect(unauthorized[0]!.FilterPattern).toBe('{ $.status = "401" }');
    expect(unauthorized[0]!.LogGroupName).toEqual(ref(s.logicalId(s.stack.restApi.accessLogs)));
    // The access log's format writes status as a quoted string, which the pattern compares as one.
    const [, apiStage] = s.ofType('AWS::ApiGateway::Stage')[0]!;
    expect(String((props(apiStage) as Record<string, any>).AccessLogSetting.Format)).toContain(
      '"status":"$context.status"',
    );

    const warnings = filters.filter((f) => f.MetricTransformations[0].MetricName === 'KeyStoreWarnings');
    expect(warnings.map((f) => f.LogGroupName)).toEqual([
      ...routes.map((route) => ref(s.logicalId(s.stack.functions.get(route.operation).logGroup))),
      ref(s.logicalId(s.stack.keyAuthorizer.logGroup)),
    ]);
    const prefixes = KEY_STORE_WARNING_PREFIXES.map((prefix) => `($.message = "${prefix}*")`).join(' || ');
    for (const filter of warnings) {
      expect(filter.FilterPattern).toBe(`{ ($.level = "WARN") && (${prefixes}) }`);
      expect(filter.MetricTransformations[0]).toMatchObject({ MetricNamespace: `PetStore/${stage}`, MetricValue: '1' });
    }
    const alarm = (name: string) => alarmNamed(s, stage, name);
    expect(alarm('Unauthorized')).toMatchObject({
      Namespace: `PetStore/${stage}`,
      MetricName: 'UnauthorizedRequests',
      Statistic: 'Sum',
    });
    expect(alarm('KeyStoreWarnings')).toMatchObject({
      Namespace: `PetStore/${stage}`,
      MetricName: 'KeyStoreWarnings',
      Statistic: 'Sum',
    });
  });

  it('watches the key authorizer: its failures counted from its own log (never its Errors, which count refusals), its throttles, duration and concurrency', () => {
    const s = of(stage);
    const authorizerFn = s.logicalId(s.stack.keyAuthorizer.fn);
    const filters = s.ofType('AWS::Logs::MetricFilter').map(([, f]) => props(f) as Record<string, any>);
    const failures = filters.filter((f) => f.MetricTransformations[0].MetricName === 'AuthorizerFailures');
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({
      LogGroupName: ref(s.logicalId(s.stack.keyAuthorizer.logGroup)),
      FilterPattern: '{ ($.level = "ERROR") && ($.operation = "authorize") }',
      MetricTransformations: [
        { MetricNamespace: `PetStore/${stage}`, MetricName: 'AuthorizerFailures', MetricValue: '1' },
      ],
    });
    const alarm = (name: string) => alarmNamed(s, stage, name);
    expect(alarm('AuthorizerFailures')).toMatchObject({
      Namespace: `PetStore/${stage}`,
      MetricName: 'AuthorizerFailures',
      Statistic: 'Sum',
    });
    for (const [name, metric, statistic] of [
      ['AuthorizerThrottles', 'Throttles', 'Sum'],
      ['AuthorizerDuration', 'Duration', 'Maximum'],
      ['AuthorizerConcurrency', 'ConcurrentExecutions', 'Maximum'],
    ] as const) {
      expect(alarm(name), name).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: metric,
        Statistic: statistic,
        Dimensions: [{ Name: 'FunctionName', Value: ref(authorizerFn) }],
      });
    }
    // No alarm reads the authorizer's Errors: every refused key is one.
    for (const [, a] of s.ofType('AWS::CloudWatch::Alarm')) {
      const p = props(a) as Record<string, any>;
      if (p.MetricName === 'Errors')
        expect(p.Dimensions, p.AlarmName).not.toEqual([{ Name: 'FunctionName', Value: ref(authorizerFn) }]);
    }
  });

  it("watches the pets table's consumed write capacity per minute, at two keys' createPet ceiling", () => {
    const s = of(stage);
    expect(alarmNamed(s, stage, 'PetsWriteCapacity')).toMatchObject({
      Namespace: 'AWS/DynamoDB',
      MetricName: 'ConsumedWriteCapacityUnits',
      Statistic: 'Sum',
      Period: 60,
      Dimensions: [{ Name: 'TableName', Value: ref(s.logicalId(s.stack.table)) }],
      Threshold: settings.alarms.petsWriteCapacityUnits,
    });
    // A pet under 1 KB is one unit: two keys creating at their ceiling for a minute.
    expect(settings.alarms.petsWriteCapacityUnits).toBe(2 * settings.keyLimits.createPet.rateLimit * 60);
    // The pets table only: the control table's writes are idempotency records and key uses.
    const watched = s
      .ofType('AWS::CloudWatch::Alarm')
      .filter(([, a]) => props(a).MetricName === 'ConsumedWriteCapacityUnits');
    expect(watched).toHaveLength(1);
  });

  it('has an SNS topic that requires TLS, subscribed by the AlarmEmail parameter and the stage email list', () => {
    const s = of(stage);
    s.template.resourceCountIs('AWS::SNS::Topic', 1);
    const [topicId] = s.ofType('AWS::SNS::Topic')[0]!;
    const subscriptions = s.ofType('AWS::SNS::Subscription').map(([, subscription]) => subscription);
    expect(subscriptions).toHaveLength(settings.alarmEmails.length + 1);
    expect(
      subscriptions.filter((sub) => JSON.stringify(props(sub).Endpoint) === JSON.stringify(ref('AlarmEmail'))),
    ).toEqual([
      expect.objectContaining({
        Properties: { Protocol: 'email', Endpoint: ref('AlarmEmail'), TopicArn: ref(topicId) },
      }),
    ]);
    const [, policy] = s.ofType('AWS::SNS::TopicPolicy')[0]!;
    expect(JSON.stringify(props(policy))).toContain('"aws:SecureTransport":"false"');
    expect(s.json.Outputs?.AlarmTopicArn?.Value).toEqual(ref(topicId));
  });

  it(
    settings.requireAlarmSubscriber
      ? 'cannot be deployed without an AlarmEmail: no default, and only an e-mail address passes its pattern'
      : 'may be deployed silent: AlarmEmail defaults to empty, which subscribes no one',
    () => {
      const s = of(stage);
      const parameter = (s.json.Parameters as Record<string, Record<string, string>>).AlarmEmail!;
      expect(parameter.Type).toBe('String');
      // CloudFormation matches AllowedPattern against the whole value, as these anchored patterns do.
      const pattern = new RegExp(parameter.AllowedPattern!);
      for (const email of ['ops@example.com', 'team+alerts@pets.example.co.uk'])
        expect(pattern.test(email), email).toBe(true);
      for (const bad of ['ops', 'ops@', '@example.com', 'ops@example', 'ops @example.com', 'a@b.c d@e.f'])
        expect(pattern.test(bad), bad).toBe(false);
      const subscription = s
        .ofType('AWS::SNS::Subscription')
        .find(([, sub]) => JSON.stringify(props(sub).Endpoint) === '{"Ref":"AlarmEmail"}')![1];
      if (settings.requireAlarmSubscriber) {
        expect(parameter).not.toHaveProperty('Default');
        expect(pattern.test('')).toBe(false);
        expect(parameter.Description).toContain(`cdk deploy PetStore-${stage} --parameters AlarmEmail=ops@example.com`);
        expect(parameter.ConstraintDescription).toContain('--parameters AlarmEmail=');
        expect(subscription).not.toHaveProperty('Condition');
      } else {
        expect(parameter.Default).toBe('');
        expect(pattern.test('')).toBe(true);
        expect(subscription.Condition).toBe('AlarmEmailGiven');
        expect(s.json.Conditions).toEqual({
          AlarmEmailGiven: { 'Fn::Not': [{ 'Fn::Equals': [ref('AlarmEmail'), ''] }] },
        });
      }
    },
  );

  it('has one dashboard: requests, status classes, latency per operation, cold starts, duration, DynamoDB, alarms', () => {
    const s = of(stage);
    s.template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    const [, dashboard] = s.ofType('AWS::CloudWatch::Dashboard')[0]!;
    expect(props(dashboard).DashboardName).toBe(`petstore-${stage}`);
    const body = JSON.stringify(props(dashboard).DashboardBody);
    for (const title of [
      'Requests per operation',
      'Answers by status class',
      'Latency per operation (p50, p99), ms',
      'Throttled requests (429)',
      'Lambda cold starts',
      'Lambda duration (p50, p99), ms',
      'Lambda errors, throttles, concurrency',
      'DynamoDB pets table: consumed capacity and throttles',
      'DynamoDB control table: consumed capacity and throttles',
      'Alarms',
    ]) {
      expect(body, title).toContain(`\\"title\\":\\"${title}\\"`);
    }
    for (const metric of [
      'ConsumedReadCapacityUnits',
      'ConsumedWriteCapacityUnits',
      '4XXError',
      '5XXError',
      'Count',
      'Duration',
      'ThrottledRequests',
    ]) {
      expect(body, metric).toContain(`\\"${metric}\\"`);
    }
    expect(body).toContain('\\"p50\\"');
    expect(body).toContain('\\"p99\\"');
  });
});

describe('alarm subscribers from the stage settings', () => {
  function productionWith(changes: Partial<StageSettings>) {
    const { app } = testApp({ stages: [] });
    return new PetStoreStack(app, 'PetStore-production', {
      stackName: 'PetStore-production',
      settings: { ...STAGE_SETTINGS.production, ...changes },
    });
  }

  it('makes AlarmEmail optional where the settings already name a subscriber (an address or a topic)', () => {
    for (const changes of [
      { alarmEmails: ['ops@example.com'] },
      { alarmTopicArns: ['arn:aws:sns:us-east-1:123456789012:paging'] },
    ]) {
      const s = synthesize(productionWith(changes));
      const parameter = (s.json.Parameters as Record<string, Record<string, string>>).AlarmEmail!;
      expect(parameter.Default, JSON.stringify(changes)).toBe('');
      expect(s.json.Conditions, JSON.stringify(changes)).toHaveProperty('AlarmEmailGiven');
    }
  });

  it('subscribes each address of alarmEmails, and sends every alarm and OK to each topic of alarmTopicArns too', () => {
    const paging = 'arn:aws:sns:us-east-1:123456789012:paging';
    const s = synthesize(productionWith({ alarmEmails: ['a@example.com', 'b@example.com'], alarmTopicArns: [paging] }));
    const endpoints = s.ofType('AWS::SNS::Subscription').map(([, sub]) => props(sub).Endpoint);
    expect(endpoints).toEqual(expect.arrayContaining(['a@example.com', 'b@example.com', ref('AlarmEmail')]));
    const [topicId] = s.ofType('AWS::SNS::Topic')[0]!;
    for (const [id, alarm] of s.ofType('AWS::CloudWatch::Alarm')) {
      expect(props(alarm).AlarmActions, id).toEqual([ref(topicId), paging]);
      expect(props(alarm).OKActions, id).toEqual([ref(topicId), paging]);
    }
  });

  it('refuses at synth an address that is not one, and more topics than an alarm can notify', () => {
    expect(() => productionWith({ alarmEmails: ['ops at example.com'] })).toThrow(
      /"ops at example.com" is not an e-mail address/,
    );
    const topics = [1, 2, 3, 4, 5].map((n) => `arn:aws:sns:us-east-1:123456789012:t${n}`);
    expect(() => productionWith({ alarmTopicArns: topics })).toThrow(/at most 4 topics/);
  });
});

describe("the API-key store's warnings", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** What the template's key-store warnings filter (the same on every log group) matches. */
  const matchesFilter = (line: string): boolean => {
    const filter = of('production')
      .ofType('AWS::Logs::MetricFilter')
      .map(([, f]) => props(f) as Record<string, any>)
      .find((f) => f.MetricTransformations[0].MetricName === 'KeyStoreWarnings')!;
    return matchesFilterPattern(filter.FilterPattern, line);
  };

  it('are the lines the store writes: a failed refresh, an unreadable key item, no keys', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'warn').mockImplementation((line: string) => void lines.push(line));
    let now = 0;
    const pages: (() => Promise<unknown>)[] = [
      async () => ({ Items: [{ sk: 'broken', sha256: 'not hex', createdAt: 'never' }] }),
      async () => Promise.reject(new Error('the table is unreachable')),
    ];
    const documents = { send: () => pages.shift()!() } as unknown as DynamoDBDocumentClient;
    const keys = new ControlTableApiKeys({ documents, tableName: 'control', ttlMs: 1000, now: () => now });
    await keys.keyDigests(); // loads: one unreadable item, so no keys
    now = 2000;
    await keys.keyDigests(); // stale: refreshes in the background, which fails
    await vi.waitFor(() => expect(lines).toHaveLength(3));
    expect(lines.map((line) => matchesFilter(line))).toEqual([true, true, true]);
    expect(lines.map((line) => JSON.parse(line).message as string).sort()).toEqual([
      expect.stringMatching(/^Could not refresh the API keys in control/),
      expect.stringMatching(/^Ignoring API key item broken of control/),
      expect.stringMatching(/^No API keys in control/),
    ]);
    // And not the store's other lines, nor a request line.
    expect(matchesFilter(JSON.stringify({ level: 'INFO', message: 'request', operation: 'getPet', status: 200 }))).toBe(
      false,
    );
    expect(matchesFilter(JSON.stringify({ level: 'WARN', message: 'Could not read the cursor secret' }))).toBe(false);
  });

  it("and the line the authorizer writes when it cannot record a key's use", async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'warn').mockImplementation((line: string) => void lines.push(line));
    const documents = {
      send: () =>
        Promise.reject(
          Object.assign(new Error('not authorized to perform dynamodb:UpdateItem'), { name: 'AccessDeniedException' }),
        ),
    } as unknown as DynamoDBDocumentClient;
    await new KeyUses(documents, 'control').record('0123456789ab');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!).message).toBe('Could not record the use of API key 0123456789ab in control.');
    expect(matchesFilter(lines[0]!)).toBe(true);
  });
});
