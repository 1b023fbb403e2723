/**
 * The child side of a LambdaFunctionHost sandbox (sandbox.ts): one Lambda execution environment, doing what
 * the AWS Lambda Node.js runtime (aws-lambda-nodejs-runtime-interface-client) does, with the host's
 * IPC channel in place of the Runtime API. Plain JavaScript so the child runs on a bare Node 22.
 *
 * Init: loads `_HANDLER` from `LAMBDA_TASK_ROOT` (`<module>`, `.js`, `.mjs`, `.cjs`, in the runtime's
 * order; a `.js` file with `require` unless a package.json in the task says "type": "module"), then answers `{type:'ready'}` or `{type:'initError'}` and exits.
 * Invoke: `{type:'invoke', requestId, event, deadlineMs, traceId, invokedFunctionArn}` in,
 * `{type:'result', requestId, ok, payloadJson | errorType+errorMessage}` out. START, END and REPORT
 * lines go to stdout as Lambda writes them to the log stream; console output is patched to Lambda's
 * text format (`<time>\t<requestId>\t<LEVEL>\t<message>`, newlines turned into `\r`).
 */
import { once } from 'node:events';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire, registerHooks } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import util from 'node:util';
import { Worker } from 'node:worker_threads';
import { PAUSE_SLOTS, pausedMs } from './debuggerPauses.mjs';

const FUNCTION_EXPR = /^([^.]*)\.(.*)$/;
const MODULE_EXTENSIONS = ['', '.js', '.mjs', '.cjs'];
/** Exit status when the function's own code failed the process, as the runtime exits then. */
const UNCAUGHT_EXIT_STATUS = 129;

class RuntimeError extends Error {
  constructor(name, message) {
    super(message);
    this.name = `Runtime.${name}`;
  }
}

let currentRequestId;
let maxMemoryUsedMiB = 0;
/** Milliseconds a debugger has kept this sandbox paused so far (always 0 unless inspected). */
let debuggerPausedMs = () => 0;

patchConsole();
await watchDebuggerPauses();

const initStart = performance.now();
const loaded = await loadHandler(process.env.LAMBDA_TASK_ROOT ?? process.cwd(), process.env._HANDLER ?? '').then(
  (handler) => ({ handler }),
  (error) => ({ error }),
);
let initDurationMs = performance.now() - initStart;

if (loaded.error) {
  const error = loaded.error;
  console.error('Uncaught Exception', formatError(error));
  writeLine(
    `INIT_REPORT Init Duration: ${initDurationMs.toFixed(2)} ms\tPhase: init\tStatus: error\tError Type: ${errorTypeOf(error)}`,
  );
  process.send({ type: 'initError', ...toResponse(error) }, () => process.exit(1));
} else {
  process.on('message', (message) => {
    if (message?.type === 'invoke') void invoke(loaded.handler, message);
  });
  process.on('uncaughtException', (error) => failProcess('Uncaught Exception', error, error));
  process.on('unhandledRejection', (reason) => {
    const error = new RuntimeError(
      'UnhandledPromiseRejection',
      String(reason instanceof Error ? `${reason.name}: ${reason.message}` : reason),
    );
    failProcess('Unhandled Promise Rejection', error, reason);
  });
  process.send({ type: 'ready' });
}

/**
 * Under `start:deployed --inspect` the host passes `--pause-events-fd=<fd>`: a worker reports the
 * debugger's pauses there (debuggerPauses.mjs), watching before init starts. Lambda has no such thing.
 */
async function watchDebuggerPauses() {
  const fd = process.argv.find((arg) => arg.startsWith('--pause-events-fd='))?.split('=')[1];
  if (fd === undefined) return;
  const pauses = new BigInt64Array(new SharedArrayBuffer(PAUSE_SLOTS.count * BigInt64Array.BYTES_PER_ELEMENT));
  const worker = new Worker(new URL('./debuggerPauses.mjs', import.meta.url), {
    workerData: { fd: Number(fd), pauses },
  });
  worker.unref();
  await once(worker, 'message');
  debuggerPausedMs = () => pausedMs(pauses);
}

// ---- handler loading (the runtime's UserFunctionLoader) ----

async function loadHandler(appRoot, handlerString) {
  if (handlerString.includes('..')) {
    throw new RuntimeError(
      'MalformedHandlerName',
      `'${handlerString}' is not a valid handler name. Use absolute paths when specifying root directories in handler names.`,
    );
  }
  const handlerBase = path.basename(handlerString);
  const moduleRoot = handlerString.slice(0, handlerString.lastIndexOf(handlerBase));
  const match = FUNCTION_EXPR.exec(handlerBase);
  if (!match) throw new RuntimeError('MalformedHandlerName', 'Bad handler');
  const [, moduleName, handlerName] = match;
  const module = await loadModule(appRoot, moduleRoot, moduleName);
  let handler = findIn(handlerName, module);
  if (!handler && module && typeof module === 'object' && 'default' in module)
    handler = findIn(handlerName, module.default);
  if (!handler) throw new RuntimeError('HandlerNotFound', `${handlerString} is undefined or not exported`);
  if (typeof handler !== 'function') throw new RuntimeError('HandlerNotFound', `${handlerString} is not a function`);
  return handler;
}

async function loadModule(appRoot, moduleRoot, moduleName) {
  const withoutExtension = path.resolve(appRoot, moduleRoot, moduleName);
  try {
    for (const extension of MODULE_EXTENSIONS) {
      const file = withoutExtension + extension;
      if (!existsSync(file) || !statSync(file).isFile()) continue;
      if (extension === '.js' && !declaresModule(path.dirname(file), appRoot)) return requireCommonJs(file);
      return await import(pathToFileURL(file).href);
    }
    // Last resort, as the runtime does: Node's own resolution from the task root (e.g. a package).
    const require = createRequire(path.join(appRoot, 'noop.js'));
    return require(require.resolve(moduleName, { paths: [appRoot, path.join(appRoot, moduleRoot)] }));
  } catch (error) {
    if (error instanceof SyntaxError) throw new RuntimeError('UserCodeSyntaxError', `${error.name}: ${error.message}`);
    if (error?.code === 'MODULE_NOT_FOUND') throw new RuntimeError('ImportModuleError', `Error: ${error.message}`);
    throw error;
  }
}

/**
 * Whether the nearest package.json from `dir` up to the task root says "type": "module", as the
 * runtime asks before it loads a `.js` handler. Only the task root and below count: that is what a
 * deployed function holds (the project's package.json above cdk.out is never deployed).
 */
function declaresModule(dir, taskRoot) {
  const root = path.resolve(taskRoot);
  for (let folder = dir; !folder.endsWith(`${path.sep}node_modules`); folder = path.dirname(folder)) {
    const manifest = path.join(folder, 'package.json');
    if (existsSync(manifest)) {
      try {
        return JSON.parse(readFileSync(manifest, 'utf8')).type === 'module';
      } catch {
        return false;
      }
    }
    if (folder === root || folder === path.dirname(folder)) return false;
  }
  return false;
}

/**
 * `require(file)` as CommonJS: Node's own loader would take the format from the project's
 * package.json above the task root ("type": "module"), which a deployed function never has.
 */
function requireCommonJs(file) {
  const url = pathToFileURL(file).href;
  registerHooks({
    load: (target, context, nextLoad) =>
      nextLoad(target, target === url ? { ...context, format: 'commonjs' } : context),
  });
  return createRequire(file)(file);
}

function findIn(handlerName, module) {
  return handlerName
    .split('.')
    .reduce((nested, key) => (nested && typeof nested === 'object' ? nested[key] : undefined), module);
}

// ---- invocation ----

async function invoke(handler, message) {
  const { requestId, event, deadlineMs, traceId } = message;
  currentRequestId = requestId;
  process.env._X_AMZN_TRACE_ID = traceId;
  writeLine(`START RequestId: ${requestId} Version: ${process.env.AWS_LAMBDA_FUNCTION_VERSION}`);
  const started = performance.now();
  const response = await runHandler(handler, event, lambdaContext(message, deadlineMs)).then(
    (payload) => serialize(payload),
    (error) => {
      console.error('Invoke Error', formatError(error));
      return toResponse(error);
    },
  );
  const durationMs = performance.now() - started;
  process.send({ type: 'result', requestId, ...response });
  writeLine(`END RequestId: ${requestId}`);
  writeLine(reportLine(requestId, durationMs));
  initDurationMs = undefined;
  currentRequestId = undefined;
}

function lambdaContext(message, deadlineMs) {
  // The deadline moves on by the time a debugger keeps the sandbox paused, as the host's timeout does.
  const pausedBefore = debuggerPausedMs();
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: process.env.AWS_LAMBDA_FUNCTION_VERSION,
    invokedFunctionArn: message.invokedFunctionArn,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    awsRequestId: message.requestId,
    logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME,
    logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME,
    identity: undefined,
    clientContext: undefined,
    getRemainingTimeInMillis: () => Math.max(deadlineMs + (debuggerPausedMs() - pausedBefore) - Date.now(), 0),
  };
  return context;
}

/** Async handlers resolve; callback handlers (3 parameters) call back; both may use context.succeed/fail/done. */
function runHandler(handler, event, context) {
  return new Promise((resolve, reject) => {
    let settled = false;
    const callback = (error, result) => {
      if (settled) return;
      settled = true;
      if (error !== undefined && error !== null) reject(error);
      else resolve(result);
    };
    Object.assign(context, {
      done: callback,
      succeed: (result) => callback(null, result),
      fail: (error) => callback(error ?? 'handled'),
    });
    let result;
    try {
      result = handler(event, context, callback);
    } catch (error) {
      callback(error);
      return;
    }
    if (result && typeof result.then === 'function') {
      result.then(
        (value) => callback(null, value),
        (error) => callback(error ?? new Error('handled')),
      );
    } else if (handler.length < 3) {
      // A synchronous handler without a callback: Lambda answers null once the event loop drains.
      setImmediate(() => callback(null, null));
    }
  });
}

function serialize(payload) {
  try {
    return { ok: true, payloadJson: JSON.stringify(payload === undefined ? null : payload) };
  } catch {
    return toResponse(new RuntimeError('JSONStringifyError', 'Unable to stringify response body'));
  }
}

/** The function's own code broke the process (uncaught exception, unhandled rejection): answer, then exit. */
function failProcess(label, error, logged) {
  console.error(label, formatError(logged));
  const requestId = currentRequestId;
  const exit = () => process.exit(UNCAUGHT_EXIT_STATUS);
  if (requestId && process.connected) process.send({ type: 'result', requestId, ...toResponse(error) }, exit);
  else exit();
}

// ---- error formats (the runtime's Errors.toRapidResponse / toFormatted) ----

function errorTypeOf(error) {
  return util.types.isNativeError(error) || typeof error?.name === 'string' ? error.name : typeof error;
}

function toResponse(error) {
  if (util.types.isNativeError(error) || (typeof error?.name === 'string' && typeof error?.message === 'string')) {
    return { ok: false, errorType: error.name, errorMessage: error.message };
  }
  return { ok: false, errorType: typeof error, errorMessage: String(error) };
}

function formatError(error) {
  try {
    return `\t${JSON.stringify(error, (_key, value) => withEnumerableProperties(value))}`;
  } catch {
    const { errorType, errorMessage } = toResponse(error);
    return `\t${JSON.stringify({ errorType, errorMessage })}`;
  }
}

function withEnumerableProperties(value) {
  if (!(value instanceof Error)) return value;
  const shown = { errorType: value.name, errorMessage: value.message, code: value.code, ...value };
  if (typeof value.stack === 'string') shown.stack = value.stack.split('\n');
  return shown;
}

// ---- logs ----

function reportLine(requestId, durationMs) {
  const usage = process.memoryUsage().rss / (1024 * 1024);
  const peak = process.resourceUsage().maxRSS / 1024;
  maxMemoryUsedMiB = Math.max(maxMemoryUsedMiB, Math.round(usage), Math.round(peak));
  // Since August 2025 Lambda bills the init phase of on-demand functions too.
  const billedMs = Math.ceil(durationMs + (initDurationMs ?? 0));
  const fields = [
    `REPORT RequestId: ${requestId}`,
    `Duration: ${durationMs.toFixed(2)} ms`,
    `Billed Duration: ${billedMs} ms`,
    `Memory Size: ${process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE} MB`,
    `Max Memory Used: ${maxMemoryUsedMiB} MB`,
  ];
  if (initDurationMs !== undefined) fields.push(`Init Duration: ${initDurationMs.toFixed(2)} ms`);
  return fields.join('\t');
}

function writeLine(line) {
  process.stdout.write(`${line}\n`);
}

/** Lambda's text log format: one record a line, its newlines turned into carriage returns. */
function patchConsole() {
  const levels = { log: 'INFO', info: 'INFO', debug: 'DEBUG', warn: 'WARN', error: 'ERROR', trace: 'TRACE' };
  for (const [method, level] of Object.entries(levels)) {
    console[method] = (...args) => {
      const message = util.format(...args);
      writeLine(`${new Date().toISOString()}\t${currentRequestId}\t${level}\t${message}`.replace(/\n/g, '\r'));
    };
  }
  console.fatal = (...args) => console.error(...args);
}
