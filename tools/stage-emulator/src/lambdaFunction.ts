/**
 * What the emulator knows of one Lambda function and of an invocation's outcome: the definition
 * read from the template and its asset, what Invoke answers (a result, a function error, a
 * timeout, Lambda's own refusals), and the one runtime it runs.
 */

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
  /** Told what Lambda's metrics count (the alarm rehearsal's recorders, ./alarms/recorders.ts); none by default. */
  observer?: InvocationObserver;
}

/** What the host tells of each invocation, as Lambda's metrics see it. */
export interface InvocationObserver {
  /** An invocation runs (Invocations), `concurrency` of them in flight now (ConcurrentExecutions). */
  started(concurrency: number): void;
  /** It ended with `outcome` after `durationMs` of running (Duration; an error or timeout is Errors). */
  ended(outcome: InvokeOutcome, durationMs: number): void;
  /** One refused past the reserved concurrency (Throttles). */
  throttled(): void;
  /** A line the function wrote to its log group (metric filters read it). */
  logLine(line: string): void;
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
