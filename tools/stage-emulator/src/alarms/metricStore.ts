/**
 * The metrics an offline stage emits, as CloudWatch would hold them: raw data points by namespace,
 * metric name and dimensions, stamped by the rehearsal's simulated clock. The recorders
 * (./recorders*.ts) write here from what the stage does; the evaluator (./evaluate*.ts) reads here.
 */

/** One metric as CloudWatch names it: namespace, name and every dimension (order does not matter). */
export interface MetricId {
  readonly namespace: string;
  readonly metricName: string;
  readonly dimensions: Readonly<Record<string, string>>;
}

/** One value put at one simulated instant (epoch ms), as PutMetricData or a service would. */
export interface DataPoint {
  readonly timestamp: number;
  readonly value: number;
}

/** A clock the rehearsal advances: simulated minutes pass in real seconds. */
export interface Clock {
  now(): number;
}

const keyOf = ({ namespace, metricName, dimensions }: MetricId): string =>
  JSON.stringify([namespace, metricName, Object.entries(dimensions).sort(([a], [b]) => a.localeCompare(b))]);

export class MetricStore {
  readonly #series = new Map<string, { id: MetricId; points: DataPoint[] }>();

  constructor(readonly clock: Clock) {}

  /** Records `value` for `id` now (the clock's time). */
  put(id: MetricId, value: number): void {
    this.putAt(id, value, this.clock.now());
  }

  putAt(id: MetricId, value: number, timestamp: number): void {
    const key = keyOf(id);
    const series = this.#series.get(key) ?? { id, points: [] };
    series.points.push({ timestamp, value });
    this.#series.set(key, series);
  }

  /** The values of `id` with `start <= timestamp < end` (an alarm's period). */
  values(id: MetricId, start: number, end: number): number[] {
    const points = this.#series.get(keyOf(id))?.points ?? [];
    return points.filter(({ timestamp }) => timestamp >= start && timestamp < end).map(({ value }) => value);
  }

  /** Every metric that has at least one point (for reports, and to say what a scenario moved). */
  metrics(): MetricId[] {
    return [...this.#series.values()].map(({ id }) => id);
  }
}
