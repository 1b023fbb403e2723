/**
 * The alarms of a synthesized template, read as CloudWatch would hold them once deployed: what
 * each reads (one metric and statistic, or metric math over MetricStat queries), how it compares,
 * its M out of N, its treatment of missing data and its actions, with the intrinsics resolved the
 * way CloudFormation would (../intrinsics.ts). An alarm the evaluator cannot evaluate faithfully
 * (a composite alarm, anomaly detection, an unknown statistic, function or property) is refused by
 * name, never read as something else.
 */
import { CloudAssemblyError, type CfnResource, type CfnTemplate } from '../cloudAssembly.ts';
import { TemplateResolver } from '../intrinsics.ts';
import { MathSyntaxError, type MathNode, parseExpression, referencedIds } from './metricMath.ts';
import type { MetricId } from './metricStore.ts';
import { parseStatistic, type Statistic } from './statistics.ts';

export type AlarmState = 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';
export type TreatMissingData = 'missing' | 'notBreaching' | 'breaching' | 'ignore';
export type ComparisonOperator =
  | 'GreaterThanOrEqualToThreshold'
  | 'GreaterThanThreshold'
  | 'LessThanThreshold'
  | 'LessThanOrEqualToThreshold';

/** A metric and the statistic of each period's values (a single-metric alarm has one, id `metric`). */
export interface MetricQuery {
  readonly kind: 'metric';
  readonly id: string;
  readonly metric: MetricId;
  readonly statistic: Statistic;
}

/** A metric math expression over the alarm's other queries. */
export interface ExpressionQuery {
  readonly kind: 'expression';
  readonly id: string;
  readonly expression: string;
  readonly node: MathNode;
}

export type AlarmQuery = MetricQuery | ExpressionQuery;

/** An action target (an SNS topic's ARN), with the topic's logical id when the template refers to it. */
export interface AlarmAction {
  readonly arn: string;
  readonly logicalId?: string;
}

export interface AlarmModel {
  readonly logicalId: string;
  readonly alarmName: string;
  readonly periodSeconds: number;
  /** Every query by id; `returned` is the one whose series the alarm compares with its threshold. */
  readonly queries: ReadonlyMap<string, AlarmQuery>;
  readonly returned: string;
  readonly comparisonOperator: ComparisonOperator;
  readonly threshold: number;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm: number;
  readonly treatMissingData: TreatMissingData;
  readonly evaluateLowSampleCountPercentile: 'evaluate' | 'ignore';
  readonly actionsEnabled: boolean;
  /** The actions run on entering each state (AlarmActions, OKActions, InsufficientDataActions). */
  readonly actions: Readonly<Record<AlarmState, readonly AlarmAction[]>>;
}

/** An alarm the offline evaluator cannot evaluate: the message names it and what stops it. */
export class AlarmRefusedError extends CloudAssemblyError {
  override name = 'AlarmRefusedError';
  constructor(
    readonly logicalId: string,
    readonly alarmName: string,
    readonly reason: string,
  ) {
    super(`Alarm ${logicalId} (${alarmName}) cannot be evaluated offline: ${reason}`);
  }
}

export interface TemplateAlarms {
  readonly alarms: AlarmModel[];
  readonly refused: AlarmRefusedError[];
}

const COMPARISONS: readonly ComparisonOperator[] = [
  'GreaterThanOrEqualToThreshold',
  'GreaterThanThreshold',
  'LessThanThreshold',
  'LessThanOrEqualToThreshold',
];
const TREATMENTS: readonly TreatMissingData[] = ['missing', 'notBreaching', 'breaching', 'ignore'];
/** The properties of AWS::CloudWatch::Alarm the evaluator reads; any other one is refused by name. */
const READ_PROPERTIES = new Set([
  'ActionsEnabled',
  'AlarmActions',
  'AlarmDescription',
  'AlarmName',
  'ComparisonOperator',
  'DatapointsToAlarm',
  'Dimensions',
  'EvaluateLowSampleCountPercentile',
  'EvaluationPeriods',
  'ExtendedStatistic',
  'InsufficientDataActions',
  'MetricName',
  'Metrics',
  'Namespace',
  'OKActions',
  'Period',
  'Statistic',
  'Tags',
  'Threshold',
  'TreatMissingData',
]);
const QUERY_PROPERTIES = new Set(['Id', 'Expression', 'MetricStat', 'ReturnData', 'Label', 'Period']);
const SINGLE_METRIC_ID = 'metric';

/**
 * Every alarm of the stack's template (those whose Condition holds): read, or refused with the reason.
 * Physical names and ARNs are those ../intrinsics.ts gives, as the rest of the emulator names them.
 */
export function readAlarms(stack: { stackName: string; template: CfnTemplate }): TemplateAlarms {
  const resolver = new TemplateResolver(stack);
  const alarms: AlarmModel[] = [];
  const refused: AlarmRefusedError[] = [];
  for (const [logicalId, resource] of Object.entries(stack.template.Resources)) {
    if (resource.Type !== 'AWS::CloudWatch::Alarm' && resource.Type !== 'AWS::CloudWatch::CompositeAlarm') continue;
    if (resource.Condition !== undefined && !resolver.condition(resource.Condition)) continue;
    let alarmName = logicalId;
    try {
      alarmName = resolver.ref(logicalId);
      if (resource.Type === 'AWS::CloudWatch::CompositeAlarm') {
        throw new ReadError(
          `a composite alarm (AlarmRule ${JSON.stringify(resource.Properties?.AlarmRule)}) is not evaluated offline.`,
        );
      }
      alarms.push(readAlarm(logicalId, alarmName, resource, resolver));
    } catch (error) {
      if (!(error instanceof ReadError || error instanceof CloudAssemblyError)) throw error;
      refused.push(new AlarmRefusedError(logicalId, alarmName, error.message));
    }
  }
  return { alarms, refused };
}

/** A reason to refuse the alarm being read (readAlarms adds its name). */
class ReadError extends Error {}

function readAlarm(logicalId: string, alarmName: string, resource: CfnResource, resolver: TemplateResolver) {
  const raw = resource.Properties ?? {};
  if (raw.ThresholdMetricId !== undefined) {
    const band = (raw.Metrics as { Id?: unknown; Expression?: unknown }[] | undefined)?.find(
      ({ Id }) => Id === raw.ThresholdMetricId,
    );
    throw new ReadError(
      `it compares with the band ${String(raw.ThresholdMetricId)} (${JSON.stringify(band?.Expression)}): anomaly detection is not evaluated offline.`,
    );
  }
  const unread = Object.keys(raw).filter((key) => !READ_PROPERTIES.has(key));
  if (unread.length > 0) throw new ReadError(`it sets ${unread.join(', ')}, which the evaluator does not read.`);
  const props = resolver.resolve(raw) as Record<string, unknown>;
  const { queries, returned, periodSeconds } =
    props.Metrics === undefined ? singleMetric(props) : metricMath(props.Metrics);
  const evaluationPeriods = positiveInteger(props.EvaluationPeriods, 'EvaluationPeriods');
  const datapointsToAlarm =
    props.DatapointsToAlarm === undefined
      ? evaluationPeriods
      : positiveInteger(props.DatapointsToAlarm, 'DatapointsToAlarm');
  if (datapointsToAlarm > evaluationPeriods)
    throw new ReadError(`DatapointsToAlarm ${datapointsToAlarm} exceeds EvaluationPeriods ${evaluationPeriods}.`);
  const actions = (key: string) => readActions(raw[key], resolver);
  return {
    logicalId,
    alarmName,
    periodSeconds,
    queries,
    returned,
    comparisonOperator: oneOf(props.ComparisonOperator, COMPARISONS, 'ComparisonOperator'),
    threshold: finiteNumber(props.Threshold, 'Threshold'),
    evaluationPeriods,
    datapointsToAlarm,
    treatMissingData: treatment(props.TreatMissingData, queries),
    evaluateLowSampleCountPercentile: oneOf(
      props.EvaluateLowSampleCountPercentile ?? 'evaluate',
      ['evaluate', 'ignore'] as const,
      'EvaluateLowSampleCountPercentile',
    ),
    actionsEnabled: props.ActionsEnabled === undefined || String(props.ActionsEnabled) === 'true',
    actions: {
      ALARM: actions('AlarmActions'),
      OK: actions('OKActions'),
      INSUFFICIENT_DATA: actions('InsufficientDataActions'),
    },
  } satisfies AlarmModel;
}

/** Namespace/MetricName/Dimensions/Period with Statistic or ExtendedStatistic. */
function singleMetric(props: Record<string, unknown>) {
  if (props.Statistic !== undefined && props.ExtendedStatistic !== undefined)
    throw new ReadError('it sets both Statistic and ExtendedStatistic.');
  const query: MetricQuery = {
    kind: 'metric',
    id: SINGLE_METRIC_ID,
    metric: metricId(props),
    statistic: statistic(props.Statistic ?? props.ExtendedStatistic, 'Statistic'),
  };
  return {
    queries: new Map<string, AlarmQuery>([[query.id, query]]),
    returned: query.id,
    periodSeconds: positiveInteger(props.Period, 'Period'),
  };
}

/** Metrics: MetricStat queries and expressions over them, one of which returns data. */
function metricMath(metrics: unknown) {
  if (!Array.isArray(metrics) || metrics.length === 0) throw new ReadError('Metrics is not a list of queries.');
  const queries = new Map<string, AlarmQuery>();
  const periods = new Set<number>();
  const returning: string[] = [];
  for (const entry of metrics as Record<string, unknown>[]) {
    const id = String(entry.Id);
    const unread = Object.keys(entry).filter((key) => !QUERY_PROPERTIES.has(key));
    if (unread.length > 0)
      throw new ReadError(`query ${id} sets ${unread.join(', ')}, which the evaluator does not read.`);
    if (queries.has(id)) throw new ReadError(`two queries have the id ${id}.`);
    if (entry.ReturnData === undefined || String(entry.ReturnData) === 'true') returning.push(id);
    if (entry.Expression !== undefined) {
      const expression = String(entry.Expression);
      queries.set(id, { kind: 'expression', id, expression, node: expressionOf(id, expression) });
    } else {
      const { query, period } = metricStat(id, entry.MetricStat);
      queries.set(id, query);
      periods.add(period);
    }
  }
  if (returning.length !== 1)
    throw new ReadError(
      `${returning.length} queries return data (${returning.join(', ')}); an alarm needs exactly one.`,
    );
  checkReferences(queries);
  if (periods.size !== 1)
    throw new ReadError(`its metrics use periods ${[...periods].join(', ')}; an alarm needs one.`);
  return { queries, returned: returning[0]!, periodSeconds: [...periods][0]! };
}

function expressionOf(id: string, expression: string): MathNode {
  try {
    return parseExpression(expression);
  } catch (error) {
    if (error instanceof MathSyntaxError) throw new ReadError(`expression ${id}: ${error.message}`);
    throw error;
  }
}

function metricStat(id: string, metricStat: unknown): { query: MetricQuery; period: number } {
  const stat = metricStat as
    | { Metric?: Record<string, unknown>; Period?: unknown; Stat?: unknown; Unit?: unknown }
    | undefined;
  if (!stat?.Metric) throw new ReadError(`query ${id} has neither Expression nor MetricStat.Metric.`);
  if (stat.Unit !== undefined)
    throw new ReadError(`query ${id} filters on Unit ${String(stat.Unit)}, which the evaluator does not read.`);
  return {
    query: { kind: 'metric', id, metric: metricId(stat.Metric), statistic: statistic(stat.Stat, `query ${id} Stat`) },
    period: positiveInteger(stat.Period, `query ${id} Period`),
  };
}

/** Every id an expression reads names another query, and no expression reads itself through others. */
function checkReferences(queries: ReadonlyMap<string, AlarmQuery>): void {
  const visit = (id: string, path: readonly string[]): void => {
    const query = queries.get(id);
    if (!query) throw new ReadError(`expression of ${path.at(-1)} reads ${id}, which no query defines.`);
    if (path.includes(id))
      throw new ReadError(`expressions read each other in a cycle (${[...path, id].join(' -> ')}).`);
    if (query.kind === 'expression') for (const next of referencedIds(query.node)) visit(next, [...path, id]);
  };
  for (const id of queries.keys()) visit(id, []);
}

function metricId(props: Record<string, unknown>): MetricId {
  const dimensions = (props.Dimensions ?? []) as { Name?: unknown; Value?: unknown }[];
  if (!Array.isArray(dimensions)) throw new ReadError('Dimensions is not a list.');
  return {
    namespace: requiredString(props.Namespace, 'Namespace'),
    metricName: requiredString(props.MetricName, 'MetricName'),
    dimensions: Object.fromEntries(dimensions.map(({ Name, Value }) => [String(Name), String(Value)])),
  };
}

function statistic(name: unknown, what: string): Statistic {
  const parsed = typeof name === 'string' ? parseStatistic(name) : undefined;
  if (!parsed)
    throw new ReadError(
      `${what} ${JSON.stringify(name)} is not a statistic the evaluator computes (SampleCount, Sum, Average, Minimum, Maximum, pNN.NN).`,
    );
  return parsed;
}

/**
 * TreatMissingData, default `missing`; alarms on AWS/DynamoDB metrics default to `ignore`
 * ("Configuring how CloudWatch alarms treat missing data": "You can override this").
 */
function treatment(value: unknown, queries: ReadonlyMap<string, AlarmQuery>): TreatMissingData {
  if (value !== undefined) return oneOf(value, TREATMENTS, 'TreatMissingData');
  const readsDynamoDb = [...queries.values()].some(
    (query) => query.kind === 'metric' && query.metric.namespace === 'AWS/DynamoDB',
  );
  return readsDynamoDb ? 'ignore' : 'missing';
}

function readActions(raw: unknown, resolver: TemplateResolver): AlarmAction[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new ReadError(`an action list is not a list: ${JSON.stringify(raw)}.`);
  return raw.map((action) => {
    const ref = (action as { Ref?: unknown } | null)?.Ref;
    const arn = resolver.resolveString(action);
    return typeof ref === 'string' && !ref.startsWith('AWS::') ? { arn, logicalId: ref } : { arn };
  });
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], what: string): T {
  const found = allowed.find((item) => item === value);
  if (found === undefined) throw new ReadError(`${what} ${JSON.stringify(value)} is not one of ${allowed.join(', ')}.`);
  return found;
}

function finiteNumber(value: unknown, what: string): number {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number))
    throw new ReadError(`${what} ${JSON.stringify(value)} is not a number.`);
  return number;
}

function positiveInteger(value: unknown, what: string): number {
  const number = finiteNumber(value, what);
  if (!Number.isInteger(number) || number < 1) throw new ReadError(`${what} ${number} is not a positive integer.`);
  return number;
}

function requiredString(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw new ReadError(`${what} is missing.`);
  return value;
}
