/**
 * The cross-check of the recorders against the alarms: each metric an alarm of the stack reads
 * (its own, or each MetricStat of its metric math) that no recorder of the offline stage can put.
 * What is left is what cannot be rehearsed offline (the WAF's BlockedRequests).
 */
import { readDeployedStack, type DeployedApiOptions } from '../deployedApi.ts';
import { OFFLINE_ENVIRONMENT } from '../intrinsics.ts';
import type { MetricId } from './metricStore.ts';
import { isRecordable, readStageMetricSources, recordableMetrics } from './recorders.ts';

interface CfnMetric {
  Namespace?: string;
  MetricName?: string;
  Dimensions?: { Name: string; Value: string }[];
}

export function unrecordedAlarmMetrics(
  options: Pick<DeployedApiOptions, 'outdir' | 'stackName' | 'parameters'>,
): { alarm: string; metric: MetricId }[] {
  const { stack, resolver } = readDeployedStack(options);
  const recordable = recordableMetrics(readStageMetricSources(stack.template, resolver, OFFLINE_ENVIRONMENT));
  return Object.entries(stack.template.Resources)
    .filter(([, resource]) => resource.Type === 'AWS::CloudWatch::Alarm')
    .flatMap(([alarm, resource]) => {
      const properties = resolver.resolve(resource.Properties ?? {}) as CfnMetric & {
        Metrics?: { MetricStat?: { Metric: CfnMetric } }[];
      };
      const read = properties.Metrics
        ? properties.Metrics.flatMap((query) => (query.MetricStat ? [query.MetricStat.Metric] : []))
        : [properties];
      return read.map((metric) => ({ alarm, metric: metricIdOf(metric) }));
    })
    .filter(({ metric }) => !isRecordable(recordable, metric));
}

const metricIdOf = ({ Namespace, MetricName, Dimensions }: CfnMetric): MetricId => ({
  namespace: String(Namespace),
  metricName: String(MetricName),
  dimensions: Object.fromEntries((Dimensions ?? []).map(({ Name, Value }) => [Name, String(Value)])),
});
