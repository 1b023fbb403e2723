/**
 * The alarm rehearsal's evaluator: read a template's alarms (readAlarms), let the stage's recorders
 * fill a MetricStore on a simulated clock, and tick an AlarmEvaluator each simulated minute.
 */
export {
  type AlarmAction,
  type AlarmModel,
  type AlarmQuery,
  AlarmRefusedError,
  type AlarmState,
  type ExpressionQuery,
  type MetricQuery,
  readAlarms,
  type TemplateAlarms,
} from './alarmModel.ts';
export {
  type AlarmNotification,
  type AlarmTransition,
  AlarmEvaluator,
  alarmDatapoints,
  EVALUATION_INTERVAL_MS,
  evaluationRange,
} from './evaluate.ts';
export { type Clock, type DataPoint, type MetricId, MetricStore } from './metricStore.ts';
