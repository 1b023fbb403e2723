/**
 * The rehearsal's scenarios: a healthy day, and one fault per alarm or group, each made the real
 * way on the running stage (the store proxy's faults, sandboxes killed mid-invocation, floods past
 * the plans' throttles and the reserved concurrency), with just the traffic each minute that its
 * alarms' thresholds need (read from the alarms themselves), for as many minutes as their M of N.
 */
import { functionMatches, type DeployedApi, type DeployedFunction } from '../deployedApi.ts';
import type { AlarmModel } from './alarmModel.ts';
import type { Scenario, ScenarioContext } from './rehearsal.ts';
import { paced, send, type RehearsalProduct } from './rehearsalTraffic.ts';

/** Whether the alarm reads `metricName` of `namespace` with these dimensions (some of them). */
const reads =
  (namespace: string, metricName: string, dimensions: Record<string, string> = {}) =>
  (alarm: AlarmModel): boolean =>
    [...alarm.queries.values()].some(
      (query) =>
        query.kind === 'metric' &&
        query.metric.namespace === namespace &&
        query.metric.metricName === metricName &&
        Object.entries(dimensions).every(([name, value]) => query.metric.dimensions[name] === value),
    );
const anyOf =
  (...tests: ((alarm: AlarmModel) => boolean)[]) =>
  (alarm: AlarmModel) =>
    tests.some((test) => test(alarm));

/** The highest threshold among the alarms `test` picks (what a minute's traffic must reach). */
const thresholdOf = (alarms: readonly AlarmModel[], test: (alarm: AlarmModel) => boolean, fallback = 1): number =>
  Math.max(fallback, ...alarms.filter(test).map((alarm) => Math.ceil(alarm.threshold)));

/** The M of N the stage's alarms need: minutes enough to reach ALARM, plus one. */
const minutesFor = (alarms: readonly AlarmModel[]) => Math.max(...alarms.map((alarm) => alarm.datapointsToAlarm)) + 1;

const functionOf = (api: DeployedApi, name: string): DeployedFunction => {
  const found = api.functions.find((fn) => functionMatches(fn.logicalId, name));
  if (!found) throw new Error(`The stage has no function ${name}.`);
  return found;
};
const killSandboxes = (fn: DeployedFunction) => {
  for (const pid of fn.host.sandboxPids) process.kill(pid, 'SIGKILL');
};
const times = <T>(count: number, make: (n: number) => T): T[] => Array.from({ length: count }, (_, n) => make(n));
const waitUntil = async (condition: () => boolean, timeoutMs = 10_000) => {
  const until = Date.now() + timeoutMs;
  while (!condition() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
};

/** Every scenario, the healthy one first. */
export function rehearsalScenarios(
  product: RehearsalProduct,
  alarms: readonly AlarmModel[],
  stage: string,
): Scenario[] {
  const operations = Object.keys(product.operations);
  const minutes = minutesFor(alarms);
  let key = '';
  const auth = () => product.authorization(key);
  const request = (context: ScenarioContext, operation: string, n: number) =>
    send(context.api, product.operations[operation]!(n), auth());
  const keyed = (scenario: Scenario): Scenario => ({
    ...scenario,
    async setup(context) {
      if (!key) key = await product.issueKey(context.api, { stage, manyCreates: true });
      await scenario.setup?.(context);
    },
  });
  const healthy: Scenario = {
    name: 'healthy',
    fault: 'steady mixed traffic: lists, gets, creates with Idempotency-Keys, a mistyped key, 404s',
    targets: () => false,
    minutes: Math.max(...alarms.map((alarm) => alarm.evaluationPeriods)) + 1,
    async minute(context, index) {
      const tasks = [
        ...operations.flatMap((operation) => times(4, (n) => () => request(context, operation, index * 10 + n))),
        () =>
          send(context.api, product.operations[operations[0]!]!(0), product.authorization(product.mistypedKey(index))),
        ...times(2, (n) => () => send(context.api, product.notFound(index * 10 + n), auth())),
      ];
      await paced(context.api, tasks, 0.5);
    },
  };
  return [
    keyed(healthy),
    keyed(runtimeKilled(product, alarms, minutes, request)),
    ...tableScenarios(product, alarms, minutes, request).map(keyed),
    keyed(unauthorizedFlood(product, alarms, minutes)),
    keyed(planThrottled(alarms, minutes, request, operations)),
  ];
}

type Send = (context: ScenarioContext, operation: string, n: number) => Promise<{ status: number }>;

/**
 * The operations' runtimes killed mid-invocation (as an out-of-memory kill would): each request
 * held on a hung store, then its sandbox killed. Lambda Errors, 5xx, and the canary's rollback alarms.
 */
function runtimeKilled(
  product: RehearsalProduct,
  alarms: readonly AlarmModel[],
  minutes: number,
  request: Send,
): Scenario {
  const operations = Object.keys(product.operations);
  return {
    name: 'runtime killed',
    fault: "each operation's sandbox killed mid-invocation while its store call hangs",
    targets: anyOf(reads('AWS/Lambda', 'Errors'), reads('AWS/ApiGateway', '5XXError')),
    minutes,
    async minute({ api }) {
      const faults = api.storeFaults!;
      const count = thresholdOf(alarms, reads('AWS/Lambda', 'Errors'));
      const before = faults.injected;
      faults.fault = { kind: 'hang' };
      const answers = operations.flatMap((operation) => times(count, (n) => request({ api, alarms }, operation, n)));
      await waitUntil(() => faults.injected - before >= operations.length * count);
      for (const operation of operations) killSandboxes(functionOf(api, operation));
      faults.fault = undefined;
      await Promise.all(answers);
    },
  };
}

/** Each table throttled, then failing (500s), under every operation's traffic and the authorizer's key reads. */
function tableScenarios(
  product: RehearsalProduct,
  alarms: readonly AlarmModel[],
  minutes: number,
  request: Send,
): Scenario[] {
  const operations = Object.keys(product.operations);
  const faultOf = (kind: 'throughput' | 'error500', metricName: string, label: string) => (tableName: string) => {
    const targets = reads('AWS/DynamoDB', metricName, { TableName: tableName });
    return {
      name: `${tableName.replace(/^.*?-/, '')} ${label}`,
      fault: `the store answers ${kind === 'error500' ? '500' : 'ProvisionedThroughputExceededException'} for ${tableName}`,
      targets,
      minutes,
      async minute(context: ScenarioContext) {
        const { api } = context;
        // A fresh authorizer sandbox reads the keys: the key store's table sees the fault too.
        killSandboxes(functionOf(api, 'authorizer'));
        api.storeFaults!.fault = { kind, tables: [tableName] };
        const perOperation = Math.ceil(thresholdOf(alarms, targets) / 2) + 1;
        try {
          await paced(
            api,
            operations.flatMap((operation) => times(perOperation, (n) => () => request(context, operation, n))),
          );
        } finally {
          api.storeFaults!.fault = undefined;
        }
      },
    } satisfies Scenario;
  };
  return [
    ...tableNames(alarms).map(faultOf('throughput', 'ThrottledRequests', 'throttled')),
    ...tableNames(alarms).map(faultOf('error500', 'SystemErrors', 'failing')),
  ];
}

const tableNames = (alarms: readonly AlarmModel[]): string[] => [
  ...new Set(
    alarms.flatMap((alarm) =>
      [...alarm.queries.values()].flatMap((query) =>
        query.kind === 'metric' && query.metric.namespace === 'AWS/DynamoDB' && query.metric.dimensions.Operation
          ? [query.metric.dimensions.TableName!]
          : [],
      ),
    ),
  ),
];

/** Requests without a key, and with mistyped ones: 401s, the 4xx rate. */
function unauthorizedFlood(product: RehearsalProduct, alarms: readonly AlarmModel[], minutes: number): Scenario {
  const first = Object.keys(product.operations)[0]!;
  return {
    name: 'keyless and bad-key flood',
    fault: 'requests without a key or with a mistyped one',
    targets: anyOf(reads('AWS/ApiGateway', '4XXError'), (alarm) => /Unauthorized/.test(alarm.alarmName)),
    minutes,
    async minute({ api }, index) {
      const count =
        Math.max(...alarms.filter((alarm) => /Unauthorized/.test(alarm.alarmName)).map((a) => a.threshold), 1) + 5;
      await paced(
        api,
        times(
          count,
          (n) => () =>
            send(
              api,
              product.operations[first]!(n),
              n % 2 ? product.authorization(product.mistypedKey(index * 1000 + n)) : {},
            ),
        ),
      );
    },
  };
}

/** One key past its usage plan's burst: 429s. */
function planThrottled(alarms: readonly AlarmModel[], minutes: number, request: Send, operations: string[]): Scenario {
  return {
    name: 'usage plan throttled',
    fault: "one key's requests past its usage plan's burst",
    targets: (alarm) => /Throttled$/.test(alarm.alarmName) && !reads('AWS/DynamoDB', 'ThrottledRequests')(alarm),
    minutes,
    async minute(context) {
      const count = 40 + thresholdOf(alarms, (alarm) => /ApiThrottled/.test(alarm.alarmName));
      await Promise.all(times(count, (n) => request(context, operations[0]!, n)));
    },
  };
}
