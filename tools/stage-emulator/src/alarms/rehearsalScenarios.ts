/**
 * The rehearsal's scenarios: a healthy day, and one fault per alarm or group, each made the real
 * way on the running stage (the store proxy's faults, sandboxes killed mid-invocation, floods past
 * the plans' throttles and the reserved concurrency), with just the traffic each minute that its
 * alarms' thresholds need (read from the alarms themselves), for as many minutes as their M of N.
 */
import type { AlarmModel } from './alarmModel.ts';
import { anyOf, type RehearsalDriver, reads, times, waitUntil } from './rehearsalDriver.ts';
import type { Scenario } from './rehearsal.ts';
import { MAX_INSTANCES as MAX_SANDBOXES } from '../lambdaHost.ts';

/** Every scenario, the healthy one first. */
export function rehearsalScenarios(driver: RehearsalDriver): Scenario[] {
  // A fault scenario runs M minutes: its alarms reach ALARM on the M-th, or never.
  const minutes = Math.max(...driver.alarms.map((alarm) => alarm.datapointsToAlarm));
  return [
    healthy(driver),
    runtimeKilled(driver, minutes),
    ...driver.tableNames().flatMap((table) => tableFaults(driver, minutes, table)),
    concurrencyFlood(driver, minutes),
    authorizerFlood(driver, minutes),
    keyUsesNotRecorded(driver, minutes),
    unauthorizedFlood(driver, minutes),
    planThrottled(driver, minutes),
    createFlood(driver, minutes),
  ];
}

/** Steady mixed traffic, well under every throttle: lists, gets of real pets, creates, a mistyped key, 404s. */
function healthy(driver: RehearsalDriver): Scenario {
  const { product } = driver;
  return {
    name: 'healthy',
    fault: 'none',
    targets: () => false,
    minutes: Math.max(...driver.alarms.map((alarm) => alarm.evaluationPeriods)) + 1,
    async setup() {
      await driver.mainKey();
      for (const n of times(3, (n) => n)) await driver.request(product.writeOperation, n);
    },
    async minute(_, index) {
      const key = await driver.mainKey();
      const tasks = [
        ...driver.operations.flatMap((operation) => times(4, (n) => () => driver.request(operation, index * 10 + n))),
        () => driver.request(driver.operations[0]!, index, product.mistypedKey(index)),
        ...times(2, (n) => () => driver.send(product.notFound(index * 10 + n), key)),
      ];
      await Promise.all(tasks.map((task) => task()));
    },
  };
}

/**
 * The operations' runtimes killed mid-invocation (as an out-of-memory kill would): each request
 * held on a hung store, then its sandbox killed. Lambda Errors and the 5xx rate.
 */
function runtimeKilled(driver: RehearsalDriver, minutes: number): Scenario {
  const faults = driver.api.storeFaults!;
  const count = driver.threshold(reads('AWS/Lambda', 'Errors'));
  return {
    name: 'runtime killed',
    fault: "each operation's sandbox killed mid-invocation",
    targets: anyOf(reads('AWS/Lambda', 'Errors'), reads('AWS/ApiGateway', '5XXError')),
    minutes,
    async minute() {
      const before = faults.injected;
      faults.fault = { kind: 'hang' };
      const answers = driver.operations.flatMap((operation) => times(count, (n) => driver.request(operation, n)));
      // Every request held in its own sandbox, its store call hung, before the kill.
      await waitUntil(
        () =>
          faults.injected - before >= driver.operations.length * count &&
          driver.operations.every((operation) => driver.fn(operation).host.sandboxPids.length >= count),
      );
      await Promise.all(driver.operations.map((operation) => driver.kill(operation)));
      faults.fault = undefined;
      await Promise.all(answers);
    },
  };
}

/**
 * A table throttled, failing (500s) and hung, under every operation's traffic and the key
 * authorizer's reads of the keys (a fresh key each minute, its authorizer started cold, so it reads
 * them): the table's alarms, and for the keys' table the authorizer's failures and the key-store
 * warnings; a hung table, the durations and latencies.
 */
function tableFaults(driver: RehearsalDriver, minutes: number, table: string): Scenario[] {
  // `PetStore-production-PetsTable56B0D675` is the `Pets` table.
  const short = table.replace(`${driver.api.stack.stackName}-`, '').replace(/Table[0-9A-F]{8}$/, '');
  const keyStore = anyOf(reads('*', 'AuthorizerFailures'), reads('*', 'KeyStoreWarnings'));
  const kinds = [
    {
      kind: 'throughput',
      label: 'throttled',
      targets: reads('AWS/DynamoDB', 'ThrottledRequests', { TableName: table }),
    },
    {
      kind: 'error500',
      label: 'failing',
      targets: anyOf(reads('AWS/DynamoDB', 'SystemErrors', { TableName: table }), keyStore),
    },
    {
      kind: 'hang',
      label: 'hung',
      targets: anyOf(reads('AWS/Lambda', 'Duration'), reads('AWS/ApiGateway', 'Latency')),
    },
  ] as const;
  return kinds.map(({ kind, label, targets }) => ({
    name: `${short} table ${label}`,
    fault: `the store ${kind === 'hang' ? 'never answers' : `answers ${kind}`} for ${table}`,
    targets,
    minutes,
    async minute() {
      const key = await driver.issueKey();
      await driver.kill('authorizer');
      driver.api.storeFaults!.fault = { kind, tables: [table] };
      // A throttled or failing call is tried 3 times; a hung one holds its request for the store budget.
      const perOperation =
        kind === 'hang' ? 2 : Math.min(20, Math.ceil(driver.threshold(targets) / (3 * driver.operations.length)) + 1);
      try {
        const tasks = driver.operations.flatMap((operation) =>
          times(perOperation, (n) => () => driver.request(operation, n, key)),
        );
        await Promise.all(tasks.map((task) => task()));
      } finally {
        driver.api.storeFaults!.fault = undefined;
      }
    },
  }));
}

/**
 * Requests to every function at once, past the share of its reserved concurrency the alarms fire at
 * (and past the reservation itself), the first of them held on a hung store so that the others
 * queue behind them; new identities at once make the key authorizer's own flood.
 */
function concurrencyFlood(driver: RehearsalDriver, minutes: number): Scenario {
  const countFor = (name: string) => {
    const fn = driver.fn(name).functionName;
    const concurrency = driver.threshold(reads('AWS/Lambda', 'ConcurrentExecutions', { FunctionName: fn }));
    const reserved = driver.reserved(name);
    return Math.max(concurrency, reserved === undefined ? 0 : reserved + 5) + 2;
  };
  return {
    name: 'concurrency flood',
    fault: 'concurrent slow requests past the reserved concurrency',
    targets: anyOf(reads('AWS/Lambda', 'ConcurrentExecutions'), reads('AWS/Lambda', 'Throttles')),
    minutes,
    async setup() {
      await driver.pool(Math.max(...driver.operations.map(countFor)));
      await driver.warmPool();
    },
    async minute() {
      const keys = await driver.pool(0);
      const faults = driver.api.storeFaults!;
      // One function at a time: its first requests hold every sandbox it may run, the rest queue behind them.
      for (const operation of driver.operations) {
        faults.fault = { kind: 'hang', times: MAX_SANDBOXES };
        try {
          await Promise.all(times(countFor(operation), (n) => driver.request(operation, n, keys[n % keys.length]!)));
        } finally {
          faults.fault = undefined;
        }
      }
    },
  };
}

/**
 * New identities at once, the key authorizer started cold on a hung keys' table so that each of its
 * invocations is held and the others queue: its concurrency, and past its reservation its throttles.
 */
function authorizerFlood(driver: RehearsalDriver, minutes: number): Scenario {
  const authorizer = driver.fn('authorizer').functionName;
  const concurrency = driver.threshold(reads('AWS/Lambda', 'ConcurrentExecutions', { FunctionName: authorizer }));
  const reserved = driver.reserved('authorizer');
  const count = Math.max(concurrency, reserved === undefined ? 0 : reserved + 5) + 2;
  const tables = driver.api.tables.map(({ tableName }) => tableName);
  return {
    name: 'authorizer flood',
    fault: 'new keys at once while the key store hangs',
    targets: anyOf(
      reads('AWS/Lambda', 'ConcurrentExecutions', { FunctionName: authorizer }),
      reads('AWS/Lambda', 'Throttles', { FunctionName: authorizer }),
    ),
    minutes,
    async minute(_, index) {
      await driver.kill('authorizer');
      const faults = driver.api.storeFaults!;
      faults.fault = { kind: 'hang', tables, times: MAX_SANDBOXES };
      try {
        const first = driver.operations[0]!;
        const tasks = times(count, (n) => () => driver.request(first, n, driver.product.mistypedKey(index * 1000 + n)));
        await Promise.all(tasks.map((task) => task()));
      } finally {
        faults.fault = undefined;
      }
    },
  };
}

const unauthorizedAlarm = (alarm: AlarmModel) => reads('*', 'UnauthorizedRequests')(alarm);

/** Requests without a key, and with mistyped ones: 401s, the 4xx rate. */
function unauthorizedFlood(driver: RehearsalDriver, minutes: number): Scenario {
  const { product } = driver;
  const count = driver.threshold(unauthorizedAlarm) + 5;
  return {
    name: 'keyless and bad-key flood',
    fault: 'requests without a key or with a mistyped one',
    targets: anyOf(reads('AWS/ApiGateway', '4XXError'), unauthorizedAlarm),
    minutes,
    async minute(_, index) {
      const first = driver.operations[0]!;
      const tasks = times(
        count,
        (n) => () =>
          n % 2 ? driver.request(first, n, product.mistypedKey(index * 1000 + n)) : driver.request(first, n, null),
      );
      await Promise.all(tasks.map((task) => task()));
    },
  };
}

/** One key past its usage plan's burst (and the stage's): 429s. */
function planThrottled(driver: RehearsalDriver, minutes: number): Scenario {
  const targets = reads('*', 'ThrottledRequests');
  const isApiThrottled = (alarm: AlarmModel) => targets(alarm) && !reads('AWS/DynamoDB', 'ThrottledRequests')(alarm);
  const planBurst = Math.max(
    0,
    ...Object.values(driver.api.stack.template.Resources)
      .filter((resource) => resource.Type === 'AWS::ApiGateway::UsagePlan')
      .map((resource) => Number((resource.Properties?.Throttle as { BurstLimit?: unknown })?.BurstLimit ?? 0)),
  );
  return {
    name: 'usage plan throttled',
    fault: "one key's requests past its usage plan's burst",
    targets: isApiThrottled,
    minutes,
    async minute() {
      // Twice the burst: the bucket refills while the first ones are answered.
      const count = 2 * planBurst + driver.threshold(isApiThrottled) + 10;
      await Promise.all(times(count, (n) => driver.request(driver.operations[0]!, n, undefined, false)));
    },
  };
}

/** Creates past the write capacity a minute's alarm allows, from a pool of keys (each under its create throttle). */
function createFlood(driver: RehearsalDriver, minutes: number): Scenario {
  const targets = reads('AWS/DynamoDB', 'ConsumedWriteCapacityUnits');
  const count = Math.ceil(driver.threshold(targets) * 1.1);
  return {
    name: 'create flood',
    fault: 'many keys creating at once',
    targets,
    minutes,
    async setup() {
      await driver.pool(count);
      await driver.warmPool();
    },
    async minute(_, index) {
      const keys = await driver.pool(count);
      const write = driver.product.writeOperation;
      const tasks = times(count, (n) => () => driver.request(write, index * count + n, keys[n % keys.length]!));
      // In waves under the function's reserved concurrency (past it, Lambda throttles); the stage's throttle paces each request.
      const wave = Math.max(1, Math.floor(Math.min(0.8 * (driver.reserved(write) ?? 100), 100)));
      for (let at = 0; at < tasks.length; at += wave)
        await Promise.all(tasks.slice(at, at + wave).map((task) => task()));
    },
  };
}

/**
 * The keys' table refusing the authorizer's record of a key's use (its UpdateItem) while the keys
 * read fine: requests are allowed, and the key store warns.
 */
function keyUsesNotRecorded(driver: RehearsalDriver, minutes: number): Scenario {
  const targets = reads('*', 'KeyStoreWarnings');
  const tables = driver.api.tables.map(({ tableName }) => tableName);
  return {
    name: 'key uses not recorded',
    fault: "the store answers 500 to the authorizer's record of a key's use",
    targets,
    minutes,
    async minute() {
      const faults = driver.api.storeFaults!;
      for (const _ of times(driver.threshold(targets), (n) => n)) {
        const key = await driver.issueKey();
        await driver.kill('authorizer');
        faults.fault = { kind: 'error500', tables, operations: ['UpdateItem'] };
        try {
          await driver.request(driver.operations[0]!, 0, key);
        } finally {
          faults.fault = undefined;
        }
      }
    },
  };
}
