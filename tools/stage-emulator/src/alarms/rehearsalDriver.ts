/**
 * What the rehearsal's scenarios share while they drive the stage: the product's requests, the keys
 * issued so far (one main key, and a pool so that floods stay under each key's own usage plan), the
 * ids the creates gave (for reads of real items), and the stage's functions, tables and alarms.
 */
import { functionMatches, type DeployedApi, type DeployedFunction } from '../deployedApi.ts';
import type { AlarmModel } from './alarmModel.ts';
import {
  bucketOf,
  planThrottle,
  send,
  stageThrottle,
  type Answer,
  type RehearsalProduct,
  type RehearsalRequest,
  type TokenBucket,
} from './rehearsalTraffic.ts';

/** Requests one pooled key sends at once: under every plan's burst (and a create method's). */
const REQUESTS_PER_POOLED_KEY = 4;
/** The most a threshold asks of a minute's traffic (production's write capacity alarm asks 600 creates). */
const MAX_COUNT = 1_000;

/** Whether the alarm reads `metricName` (of `namespace`, unless `*`) with these dimensions (some of them). */
export const reads =
  (namespace: string, metricName: string, dimensions: Record<string, string> = {}) =>
  (alarm: AlarmModel): boolean =>
    [...alarm.queries.values()].some(
      (query) =>
        query.kind === 'metric' &&
        (namespace === '*' || query.metric.namespace === namespace) &&
        query.metric.metricName === metricName &&
        Object.entries(dimensions).every(([name, value]) => query.metric.dimensions[name] === value),
    );

export const anyOf =
  (...tests: ((alarm: AlarmModel) => boolean)[]) =>
  (alarm: AlarmModel) =>
    tests.some((test) => test(alarm));

export const times = <T>(count: number, make: (n: number) => T): T[] =>
  Array.from({ length: count }, (_, n) => make(n));

export class RehearsalDriver {
  #key = '';
  readonly #pool: string[] = [];
  readonly created: string[] = [];
  readonly #statuses = new Map<number, number>();
  readonly #stageBucket: TokenBucket;
  readonly #keyBucket: TokenBucket;

  constructor(
    readonly product: RehearsalProduct,
    readonly alarms: readonly AlarmModel[],
    readonly stage: string,
    readonly api: DeployedApi,
  ) {
    this.#stageBucket = bucketOf(stageThrottle(api));
    this.#keyBucket = bucketOf(planThrottle(api));
  }

  get operations(): string[] {
    return Object.keys(this.product.operations);
  }

  /**
   * The highest threshold among the alarms `test` picks (what a minute's traffic must reach), at
   * least `least`, at most MAX_COUNT: a threshold past it is one no fault of this size reaches, and
   * the rehearsal says so rather than flood the stage.
   */
  threshold(test: (alarm: AlarmModel) => boolean, least = 1): number {
    return Math.min(MAX_COUNT, Math.max(least, ...this.alarms.filter(test).map((alarm) => Math.ceil(alarm.threshold))));
  }

  fn(name: string): DeployedFunction {
    const found = this.api.functions.find((candidate) => functionMatches(candidate.logicalId, name));
    if (!found) throw new Error(`The stage has no function ${name}.`);
    return found;
  }

  /** The function's reserved concurrency in the template, if it has one. */
  reserved(name: string): number | undefined {
    const value = this.api.stack.template.Resources[this.fn(name).logicalId]?.Properties?.ReservedConcurrentExecutions;
    return value === undefined ? undefined : Number(value);
  }

  /** Kills the function's sandboxes, busy or idle (as an out-of-memory kill would); the next invocation starts cold. */
  async kill(name: string): Promise<void> {
    const { host } = this.fn(name);
    for (const pid of host.sandboxPids) process.kill(pid, 'SIGKILL');
    // Until the host has seen them die, it could still hand one an invocation.
    await waitUntil(() => host.sandboxPids.length === 0);
  }

  async mainKey(): Promise<string> {
    this.#key ||= await this.issueKey();
    return this.#key;
  }

  issueKey(): Promise<string> {
    return this.product.issueKey(this.api, { stage: this.stage, manyCreates: true });
  }

  /** At least enough pooled keys for `requests` at once. */
  async pool(requests: number): Promise<string[]> {
    const needed = Math.ceil(requests / REQUESTS_PER_POOLED_KEY);
    while (this.#pool.length < needed) this.#pool.push(await this.issueKey());
    return this.#pool;
  }

  /** Operation `operation`'s request number `n` with `key`; a create's id is kept for later reads. */
  /**
   * `key` null: none sent. Paced (the default): under the stage's throttle, and the main key under
   * its plan's; `paced: false` for the floods meant to pass them.
   */
  async request(operation: string, n: number, key: string | null = this.#key, paced = true): Promise<Answer> {
    if (paced) {
      await this.#stageBucket.take();
      if (key === this.#key) await this.#keyBucket.take();
    }
    const request = this.product.operations[operation]!(n, this.created);
    const answer = await send(this.api, request, key === null ? {} : this.product.authorization(key));
    this.#statuses.set(answer.status, (this.#statuses.get(answer.status) ?? 0) + 1);
    if (operation === this.product.writeOperation && answer.status < 300) {
      const id = this.product.createdId(answer.body);
      if (id !== undefined) this.created.push(id);
    }
    return answer;
  }

  /** A request of the product's other than an operation's (a 404), paced as `request`. */
  async send(request: RehearsalRequest, key: string): Promise<Answer> {
    await this.#stageBucket.take();
    if (key === this.#key) await this.#keyBucket.take();
    const answer = await send(this.api, request, this.product.authorization(key));
    this.#statuses.set(answer.status, (this.#statuses.get(answer.status) ?? 0) + 1);
    return answer;
  }

  /** The statuses answered since the last call, e.g. `201 x600, 429 x60`. */
  tally(): string {
    const line = [...this.#statuses.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, count]) => `${status} x${count}`)
      .join(', ');
    this.#statuses.clear();
    return line;
  }

  /** Sends one request with each pooled key, so that the key authorizer's verdicts are cached before a flood. */
  async warmPool(): Promise<void> {
    // A warm authorizer knows only the keys of its last read: a cold one reads the pool's too.
    await this.kill('authorizer');
    for (const key of this.#pool) await this.request(this.operations[0]!, 0, key);
  }

  /** The tables the alarms watch per operation (their DynamoDB throttles and system errors). */
  tableNames(): string[] {
    return [
      ...new Set(
        this.alarms.flatMap((alarm) =>
          [...alarm.queries.values()].flatMap((query) =>
            query.kind === 'metric' && query.metric.namespace === 'AWS/DynamoDB' && query.metric.dimensions.Operation
              ? [query.metric.dimensions.TableName!]
              : [],
          ),
        ),
      ),
    ];
  }
}

/** Waits (real time) until `condition` holds, or `timeoutMs` passed. */
export async function waitUntil(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
}
