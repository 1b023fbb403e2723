/**
 * The metrics the offline stage emits, derived as AWS derives them from what the stage does, into a
 * MetricStore stamped by its clock (the rehearsal's simulated one):
 * - AWS/Lambda by FunctionName (the alarms' only dimension), from the host's invocations.
 * - AWS/ApiGateway by ApiName+Stage, and by ApiName+Stage+Resource+Method where the stage's method
 *   settings enable detailed metrics, from each answer.
 * - AWS/DynamoDB by TableName+Operation and by TableName, from each answer the functions got from
 *   the store, faults included (./faultProxy.ts's `answered`).
 * - The template's metric filters on the functions' log lines and on the stage's access log (./logMetrics.ts).
 * `recordableMetrics` lists every metric these can produce, for the alarms' cross-check.
 */
import type { CfnTemplate } from '../cloudAssembly.ts';
import type { DeployedEnvironment } from '../intrinsics.ts';
import type { InvocationObserver, InvokeOutcome } from '../lambdaFunction.ts';
import type { AnsweredRequest } from '../restApi.ts';
import type { ApiMethod, ApiResolver, ApiResource, RestApi } from '../restApiModel.ts';
import { readRestApi } from '../restApiTemplate.ts';
import type { StoreCall } from './faultProxy.ts';
import {
  accessLogLine,
  applyMetricFilters,
  filterMetricIds,
  readAccessLog,
  readMetricFilters,
  type AccessLog,
  type MetricFilter,
} from './logMetrics.ts';
import type { MetricId, MetricStore } from './metricStore.ts';

const LAMBDA_METRICS = ['Invocations', 'Errors', 'Throttles', 'Duration', 'ConcurrentExecutions'] as const;
const API_METRICS = ['Count', '4XXError', '5XXError', 'Latency', 'IntegrationLatency'] as const;
const READS = ['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems'];
const WRITES = ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems'];
/** What DynamoDB answers a request over a table's or partition's throughput with. */
const THROTTLE_ERRORS = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException']);

/** What the stage's metrics are derived from, read from its template once. */
export interface StageMetricSources {
  functionNames: string[];
  apiName: string;
  api: RestApi;
  tableNames: string[];
  filters: MetricFilter[];
  accessLog: AccessLog | undefined;
}

export function readStageMetricSources(
  template: CfnTemplate,
  resolver: ApiResolver,
  env: DeployedEnvironment,
): StageMetricSources {
  const ofType = (type: string) => Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);
  const apiResource = ofType('AWS::ApiGateway::RestApi')[0]?.[1];
  return {
    functionNames: ofType('AWS::Lambda::Function').map(([id]) => resolver.ref(id)),
    apiName: String(resolver.resolve(apiResource?.Properties?.Name ?? '')),
    api: readRestApi(template, resolver, env),
    tableNames: ofType('AWS::DynamoDB::Table').map(([id]) => resolver.ref(id)),
    filters: readMetricFilters(template, resolver),
    accessLog: readAccessLog(template, resolver),
  };
}

/** Every metric the recorders can put for this stage (a filter's dimension values are `*`). */
export function recordableMetrics(sources: StageMetricSources): MetricId[] {
  const lambda = sources.functionNames.flatMap((name) =>
    LAMBDA_METRICS.map((metricName) => ({
      namespace: 'AWS/Lambda',
      metricName,
      dimensions: { FunctionName: name },
    })),
  );
  const apiDimensions: Record<string, string>[] = [
    stageDimensions(sources),
    ...methodsOf(sources.api.root).flatMap((method) => {
      const dimensions = methodDimensions(sources, method);
      return dimensions ? [dimensions] : [];
    }),
  ];
  const api = apiDimensions.flatMap((dimensions) =>
    API_METRICS.map((metricName) => ({ namespace: 'AWS/ApiGateway', metricName, dimensions })),
  );
  const dynamo = sources.tableNames.flatMap((TableName) => [
    ...['ThrottledRequests', 'SystemErrors'].flatMap((metricName) =>
      [...READS, ...WRITES].map((Operation) => ({
        namespace: 'AWS/DynamoDB',
        metricName,
        dimensions: { TableName, Operation },
      })),
    ),
    ...['ReadThrottleEvents', 'WriteThrottleEvents', 'ConsumedReadCapacityUnits', 'ConsumedWriteCapacityUnits'].map(
      (metricName) => ({ namespace: 'AWS/DynamoDB', metricName, dimensions: { TableName } }),
    ),
  ]);
  return [...lambda, ...api, ...dynamo, ...filterMetricIds(sources.filters)];
}

/** Whether `id` is one the recorders can put (`*` in a recordable dimension stands for any value). */
export function isRecordable(recordable: MetricId[], id: MetricId): boolean {
  return recordable.some(
    (candidate) =>
      candidate.namespace === id.namespace &&
      candidate.metricName === id.metricName &&
      Object.keys(candidate.dimensions).length === Object.keys(id.dimensions).length &&
      Object.entries(candidate.dimensions).every(([name, value]) => value === '*' || id.dimensions[name] === value),
  );
}

/** The hooks the stage calls, each writing into `store`. */
export interface StageRecorders {
  /** The Lambda host's observer for one function, its log lines read by the filters of `logGroupName`. */
  lambda(functionName: string, logGroupName: string): InvocationObserver;
  /** restApi's `onAnswered`. */
  answered(answered: AnsweredRequest): void;
  /** The store proxy's `answered`. */
  storeCall(call: StoreCall): void;
}

export function stageRecorders(store: MetricStore, sources: StageMetricSources): StageRecorders {
  return {
    lambda: (functionName, logGroupName) => lambdaObserver(store, sources, functionName, logGroupName),
    answered: (answered) => {
      recordAnswer(store, sources, answered);
      const { accessLog } = sources;
      if (accessLog) {
        const line = accessLogLine(accessLog.format, answered, sources.api);
        applyMetricFilters(store, sources.filters, accessLog.logGroupName, line);
      }
    },
    storeCall: (call) => recordStoreCall(store, call),
  };
}

/**
 * Lambda's metrics (AWS, "Types of metrics for Lambda functions"): Invocations and Errors per
 * invocation (Errors 0 or 1: a function error or a timeout, an init failure included), Throttles 1 per
 * refusal past reserved concurrency (0 per accepted invocation), Duration per invocation (ms), and
 * ConcurrentExecutions as the number in flight when one starts (the alarms read its Maximum).
 */
function lambdaObserver(
  store: MetricStore,
  sources: StageMetricSources,
  functionName: string,
  logGroupName: string,
): InvocationObserver {
  const put = (metricName: string, value: number) =>
    store.put({ namespace: 'AWS/Lambda', metricName, dimensions: { FunctionName: functionName } }, value);
  return {
    started(concurrency) {
      put('Invocations', 1);
      put('Throttles', 0);
      put('ConcurrentExecutions', concurrency);
    },
    ended(outcome: InvokeOutcome, durationMs) {
      put('Errors', outcome.kind === 'ok' ? 0 : 1);
      put('Duration', durationMs);
    },
    throttled: () => put('Throttles', 1),
    logLine: (line) => applyMetricFilters(store, sources.filters, logGroupName, line),
  };
}

/**
 * API Gateway's metrics (AWS, "Amazon API Gateway dimensions and metrics"): per request Count 1,
 * 4XXError and 5XXError 0 or 1 (their Average is the rate), Latency, and IntegrationLatency when an
 * integration was called; per method too where detailed metrics are on.
 */
function recordAnswer(store: MetricStore, sources: StageMetricSources, answered: AnsweredRequest): void {
  const { exchange, answer, latencyMs } = answered;
  const method = exchange.apiMethod ? methodDimensions(sources, exchange.apiMethod) : undefined;
  for (const dimensions of [stageDimensions(sources), ...(method ? [method] : [])]) {
    const put = (metricName: string, value: number) =>
      store.put({ namespace: 'AWS/ApiGateway', metricName, dimensions }, value);
    put('Count', 1);
    put('4XXError', answer.status >= 400 && answer.status < 500 ? 1 : 0);
    put('5XXError', answer.status >= 500 ? 1 : 0);
    put('Latency', latencyMs);
    if (exchange.integrationLatencyMs !== undefined) put('IntegrationLatency', exchange.integrationLatencyMs);
  }
}

const stageDimensions = (sources: StageMetricSources) => ({ ApiName: sources.apiName, Stage: sources.api.stageName });

/** The method's dimensions, or undefined when its detailed metrics are off (its own setting, else the stage's). */
function methodDimensions(sources: StageMetricSources, method: ApiMethod): Record<string, string> | undefined {
  const settings = sources.api.methodSettings;
  const own = settings.find(
    (setting) =>
      setting.httpMethod === method.httpMethod &&
      `/${setting.resourcePath.slice(1).replace(/~1/g, '/')}` === method.resource.path,
  );
  const stage = settings.find((setting) => setting.httpMethod === '*' && setting.resourcePath === '/*');
  if (!(own?.metricsEnabled ?? stage?.metricsEnabled ?? false)) return undefined;
  return { ...stageDimensions(sources), Resource: method.resource.path, Method: method.httpMethod };
}

function methodsOf(resource: ApiResource): ApiMethod[] {
  return [...resource.methods.values(), ...resource.children.flatMap(methodsOf)];
}

/**
 * DynamoDB's metrics (AWS, "DynamoDB metrics and dimensions"), from each answer a function got:
 * ThrottledRequests (TableName, Operation) and Read/WriteThrottleEvents (TableName) per throttled
 * request, SystemErrors per 500, Consumed*CapacityUnits from what the store says it consumed (a
 * failed conditional write consumes 1, the least a write does). As on AWS, nothing is put for a
 * table and operation without an event: no throttle, no data point.
 */
function recordStoreCall(store: MetricStore, call: StoreCall): void {
  const write = WRITES.includes(call.operation);
  for (const TableName of call.tables) {
    const put = (metricName: string, value: number, withOperation = true) =>
      store.put(
        {
          namespace: 'AWS/DynamoDB',
          metricName,
          dimensions: withOperation ? { TableName, Operation: call.operation } : { TableName },
        },
        value,
      );
    if (call.errorType && THROTTLE_ERRORS.has(call.errorType)) {
      put('ThrottledRequests', 1);
      put(write ? 'WriteThrottleEvents' : 'ReadThrottleEvents', 1, false);
    }
    if (call.status >= 500) put('SystemErrors', 1);
    if (write && call.errorType === 'ConditionalCheckFailedException') put('ConsumedWriteCapacityUnits', 1, false);
  }
  for (const { tableName, capacityUnits } of call.consumed) {
    store.put(
      {
        namespace: 'AWS/DynamoDB',
        metricName: write ? 'ConsumedWriteCapacityUnits' : 'ConsumedReadCapacityUnits',
        dimensions: { TableName: tableName },
      },
      capacityUnits,
    );
  }
}
