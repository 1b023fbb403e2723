/**
 * One execution environment of a function: a Node 22 child process running lambdaRuntime.mjs in
 * the asset folder with Lambda's environment, its init within INIT_TIMEOUT_MS, then one invocation
 * at a time over IPC, each within the function's timeout (stopped while a debugger has the sandbox
 * paused), its log lines forwarded and its REPORT line ending the invocation; killed on timeout,
 * and a sandbox that dies answers its invocation as Lambda would (Runtime.ExitError).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Countdown } from './countdown.ts';
import type { FunctionDefinition, InvokeOutcome } from './lambdaFunction.ts';

/** Lambda's limit on the init phase of an on-demand function. */
const INIT_TIMEOUT_MS = 10_000;
const RUNTIME_SCRIPT = fileURLToPath(new URL('./lambdaRuntime.mjs', import.meta.url));

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

/** One execution environment: a child process that serves one invocation at a time. */
export class FunctionInstance {
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
    this.#child = spawn(
      nodeBinary,
      [...nodeOptions(definition.memoryMiB), ...inspector, ...preload, RUNTIME_SCRIPT, ...runtimeArgs],
      {
        cwd: definition.assetDir,
        env,
        // At index PAUSE_EVENTS_FD: the inspected sandbox's pause reports.
        stdio: ['ignore', 'pipe', 'pipe', 'ipc', inspected ? 'pipe' : 'ignore'],
      },
    );
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
    const left = (clock: Countdown) =>
      `${(clock.leftMs / 1000).toFixed(2)} s of ${(clock.totalMs / 1000).toFixed(2)} s left`;
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
    const status =
      outcome.kind === 'timeout'
        ? 'timeout'
        : outcome.kind === 'error'
          ? `error\tError Type: ${outcome.errorType}`
          : undefined;
    if (outcome.kind === 'timeout')
      this.#log(`${new Date().toISOString()} ${pending.requestId} ${outcome.errorMessage}`);
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
      return {
        kind: 'timeout',
        errorMessage: `Task timed out after ${this.#definition.timeoutSeconds.toFixed(2)} seconds`,
      };
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
