/**
 * Runs one Lambda function from its cdk.out asset folder, the way the Lambda Node.js runtime would:
 * each execution environment is a Node 22 child process (lambdaRuntime.mjs) started in the asset
 * folder with exactly Lambda's environment, one invocation at a time, warm between invocations,
 * killed on timeout and replaced when it dies. As Lambda scales, a request no idle environment can
 * take gets a new one (its own cold start). Past the function's reserved concurrency Lambda refuses
 * the invocation at once (TooManyRequestsException), and so does this host; past the runner's own
 * MAX_INSTANCES (a laptop's limit, not Lambda's) a request waits for a sandbox instead. An
 * environment idle for longer than `idleTimeoutMs` is recycled, so the next request past it starts
 * cold again. One environment is ./sandbox.ts; its variables, ./lambdaEnvironment.ts.
 */
import { existsSync } from 'node:fs';
import { lambdaEnvironment, lambdaNodeBinary, logStreamNameFor } from './lambdaEnvironment.ts';
import {
  INVOKE_PAYLOAD_LIMIT_BYTES,
  LambdaHostError,
  SUPPORTED_RUNTIME,
  THROTTLED_OUTCOME,
  type FunctionDefinition,
  type InvokeOutcome,
} from './lambdaFunction.ts';
import { FunctionInstance } from './sandbox.ts';

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
      throw new LambdaHostError(
        `${definition.functionName}: runtime ${definition.runtime} is not supported (only ${SUPPORTED_RUNTIME}).`,
      );
    }
    if (!existsSync(definition.assetDir)) {
      throw new LambdaHostError(`${definition.functionName}: asset folder ${definition.assetDir} does not exist.`);
    }
    this.#definition = definition;
    this.#nodeBinary = lambdaNodeBinary();
    // Validates the environment now, so a refused variable fails at start-up rather than per request.
    lambdaEnvironment(definition, this.#nodeBinary, '');
    const log = definition.log ?? ((line) => void process.stderr.write(`[${definition.functionName}] ${line}\n`));
    const observer = definition.observer;
    this.#log = observer
      ? (line) => {
          log(line);
          observer.logLine(line);
        }
      : log;
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
    return [...this.#instances]
      .filter((instance) => instance.alive)
      .flatMap((instance) => (instance.pid === undefined ? [] : [instance.pid]));
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
    if (reserved !== undefined && this.#inFlight >= reserved) {
      this.#definition.observer?.throttled();
      return THROTTLED_OUTCOME;
    }
    this.#inFlight += 1;
    this.#definition.observer?.started(this.#inFlight);
    try {
      return await this.#invokeOnSandbox(event);
    } finally {
      this.#inFlight -= 1;
    }
  }

  async #invokeOnSandbox(event: unknown): Promise<InvokeOutcome> {
    const instance = await this.#acquire();
    try {
      const started = performance.now();
      const init = await instance.ready;
      // Duration is the handler's time; a failed init is the invocation's whole time (AWS, Lambda metrics).
      const ran = performance.now();
      const outcome = init.ok ? await instance.invoke(event) : init.outcome;
      this.#definition.observer?.ended(outcome, performance.now() - (init.ok ? ran : started));
      return outcome;
    } finally {
      this.#release(instance);
    }
  }

  /**
   * Runs new sandboxes from `assetDir` (start:deployed --watch): idle sandboxes on the old code stop
   * now, busy ones finish their invocation on it and stop then.
   */
  async replaceCode(assetDir: string): Promise<void> {
    if (!existsSync(assetDir))
      throw new LambdaHostError(`${this.#definition.functionName}: asset folder ${assetDir} does not exist.`);
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
    const instance = new FunctionInstance(this.#definition, this.#nodeBinary, env, this.#log, (gone) =>
      this.#forget(gone),
    );
    this.#instances.add(instance);
    this.#codeOf.set(instance, this.#definition.assetDir);
    this.#coldStarts += 1;
    return instance;
  }
}
