/**
 * Custom metrics from the template's own metric filters (AWS::Logs::MetricFilter), applied as
 * CloudWatch Logs applies them to each event of their log group: the pattern (./filterPattern.ts),
 * then each transformation's namespace, name, value (`1` or a `$.field`), dimensions and DefaultValue
 * (AWS, "Creating metrics from log events using filters"). The events are the functions' real log
 * lines as the Lambda host captures them, and the access log lines the stage writes in its own
 * `AccessLogSetting.Format` (`accessLogLine`). A filter this reader cannot apply is refused by name
 * when the stage starts, never skipped.
 */
import type { CfnTemplate } from '../cloudAssembly.ts';
import { contextVariables } from '../mappingTemplates.ts';
import type { AnsweredRequest } from '../restApi.ts';
import type { ApiResolver, RestApi } from '../restApiModel.ts';
import { jsonOf, matchesFilterPattern } from './filterPattern.ts';
import type { MetricId, MetricStore } from './metricStore.ts';

interface Transformation {
  namespace: string;
  metricName: string;
  /** `1`, or `$.field`: the event's value there. */
  value: string;
  defaultValue: number | undefined;
  /** Dimension name to `$.field`. */
  dimensions: Record<string, string>;
}

export interface MetricFilter {
  logicalId: string;
  logGroupName: string;
  pattern: string;
  transformations: Transformation[];
}

class MetricFilterError extends Error {}

const FIELD = /^\$(\.[A-Za-z_][A-Za-z0-9_]*)+$/;

/** The template's metric filters, each checked now: its pattern parses, its values are numbers or fields. */
export function readMetricFilters(template: CfnTemplate, resolver: ApiResolver): MetricFilter[] {
  return Object.entries(template.Resources)
    .filter(([, resource]) => resource.Type === 'AWS::Logs::MetricFilter')
    .map(([logicalId, resource]) => {
      const properties = resolver.resolve(resource.Properties ?? {}) as Record<string, unknown>;
      const filter: MetricFilter = {
        logicalId,
        logGroupName: String(properties.LogGroupName),
        pattern: String(properties.FilterPattern ?? ''),
        transformations: ((properties.MetricTransformations as Record<string, unknown>[] | undefined) ?? []).map(
          (transformation) => transformationOf(logicalId, transformation),
        ),
      };
      try {
        matchesFilterPattern(filter.pattern, '{}');
      } catch (error) {
        throw new MetricFilterError(`Metric filter ${logicalId}: ${(error as Error).message}`);
      }
      return filter;
    });
}

function transformationOf(logicalId: string, transformation: Record<string, unknown>): Transformation {
  const value = String(transformation.MetricValue);
  const dimensions = Object.fromEntries(
    Object.entries((transformation.Dimensions as Record<string, unknown> | undefined) ?? {}).map(([name, field]) => [
      name,
      String(field),
    ]),
  );
  for (const read of [value, ...Object.values(dimensions)]) {
    if (!FIELD.test(read) && (read === value ? !Number.isFinite(Number(read)) : true)) {
      throw new MetricFilterError(`Metric filter ${logicalId}: cannot read the value "${read}" (a number or $.field).`);
    }
  }
  const defaultValue = transformation.DefaultValue === undefined ? undefined : Number(transformation.DefaultValue);
  return {
    namespace: String(transformation.MetricNamespace),
    metricName: String(transformation.MetricName),
    value,
    defaultValue,
    dimensions,
  };
}

/** The metric ids a filter can put (dimension values are the events' own: `*` stands for any). */
export function filterMetricIds(filters: MetricFilter[]): MetricId[] {
  return filters.flatMap(({ transformations }) =>
    transformations.map(({ namespace, metricName, dimensions }) => ({
      namespace,
      metricName,
      dimensions: Object.fromEntries(Object.keys(dimensions).map((name) => [name, '*'])),
    })),
  );
}

/** Applies each filter of `logGroupName` to one event, putting what it matches (or its DefaultValue). */
export function applyMetricFilters(store: MetricStore, filters: MetricFilter[], logGroupName: string, event: string) {
  for (const filter of filters) {
    if (filter.logGroupName !== logGroupName) continue;
    const matched = matchesFilterPattern(filter.pattern, event);
    for (const transformation of filter.transformations) {
      const put = matched ? valuesOf(transformation, event) : undefined;
      if (put) store.put(put.id, put.value);
      else if (!matched && transformation.defaultValue !== undefined)
        store.put(idOf(transformation, {}), transformation.defaultValue);
    }
  }
}

function valuesOf(transformation: Transformation, event: string): { id: MetricId; value: number } | undefined {
  const json = jsonOf(event);
  const read = (field: string): unknown =>
    field
      .slice(2)
      .split('.')
      .reduce<unknown>(
        (value, key) => (value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined),
        json,
      );
  const value = Number(FIELD.test(transformation.value) ? read(transformation.value) : transformation.value);
  // CloudWatch publishes nothing for an event whose value or dimension field is missing or not a number.
  if (!Number.isFinite(value)) return undefined;
  const dimensions: Record<string, string> = {};
  for (const [name, field] of Object.entries(transformation.dimensions)) {
    const dimension = read(field);
    if (dimension === undefined || dimension === null) return undefined;
    dimensions[name] = String(dimension);
  }
  return { id: idOf(transformation, dimensions), value };
}

const idOf = ({ namespace, metricName }: Transformation, dimensions: Record<string, string>): MetricId => ({
  namespace,
  metricName,
  dimensions,
});

/** The stage's access log: its group and its line format (AccessLogSetting), if it has one. */
export interface AccessLog {
  logGroupName: string;
  format: string;
}

/** The stage's AccessLogSetting: the group named in its DestinationArn, and its Format. */
export function readAccessLog(template: CfnTemplate, resolver: ApiResolver): AccessLog | undefined {
  const stage = Object.values(template.Resources).find((resource) => resource.Type === 'AWS::ApiGateway::Stage');
  const setting = resolver.resolve(stage?.Properties?.AccessLogSetting) as
    | { DestinationArn?: string; Format?: string }
    | undefined;
  if (!setting?.DestinationArn || !setting.Format) return undefined;
  return { logGroupName: setting.DestinationArn.split(':log-group:')[1] ?? '', format: setting.Format };
}

/**
 * One access log line, the stage's Format with its `$context` variables filled in as API Gateway
 * fills them (AWS, "Variables for access logging for API Gateway"). A variable without a value is
 * `-`, as API Gateway writes it; `$context.error.messageString` (a quoted string) is then `"-"`,
 * so that a JSON format stays JSON.
 */
export function accessLogLine(format: string, { exchange, answer, latencyMs }: AnsweredRequest, api: RestApi): string {
  const integrated = exchange.integrationLatencyMs !== undefined;
  const context: Record<string, unknown> = {
    ...contextVariables(exchange, api),
    status: answer.status,
    responseLength: answer.body.length,
    responseLatency: Math.round(latencyMs),
    integrationLatency: integrated ? Math.round(exchange.integrationLatencyMs ?? 0) : undefined,
    integrationStatus: integrated ? 200 : undefined,
    error: {
      responseType: answer.error?.responseType,
      message: answer.error?.message,
      messageString: JSON.stringify(answer.error?.message ?? '-'),
    },
    authorizer: { principalId: exchange.authorization?.principalId },
    xrayTraceId: exchange.traceId,
  };
  return format.replace(/\$context((?:\.[A-Za-z0-9_]+)+)/g, (_, path: string) => {
    const value = path
      .slice(1)
      .split('.')
      .reduce<unknown>(
        (at, key) => (at && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined),
        context,
      );
    return value === undefined || value === null || value === '' ? '-' : String(value);
  });
}
