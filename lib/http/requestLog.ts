/**
 * The request log: exactly one JSON line per invocation, written when the answer is final (errors
 * already turned into Error bodies), and the `X-Request-Id` header on every answer.
 *
 * `requestId` is API Gateway's request id: the one a client sees (header, 5xx bodies) and the one
 * in the API's access logs. `awsRequestId` is Lambda's, in the function's own log stream. The line
 * names the caller's key only by `keyId`, the id `npm run keys -- list` prints: never the key, a header or the body.
 * createPet adds the id of the pet it answered (`petId`) and whether it was a replay.
 *
 * Our own few lines rather than Powertools Logger: its ~23 KB would cost every bundle more than
 * the cold-start budget allows (docs/operating.md, "Per-request logs").
 */
import type { APIGatewayProxyResult } from 'aws-lambda';
import type { OperationName } from '../domain/routes.ts';
import type { OperationNotes, ProxyMiddleware, ProxyRequest } from './proxy.ts';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** What one line holds (docs/operating.md, "Per-request logs"); the operation's notes come last. */
export interface RequestLogLine extends OperationNotes {
  level: 'INFO' | 'ERROR';
  message: 'request';
  operation: OperationName;
  status: number;
  errorCode?: string;
  latencyMs: number;
  coldStart: boolean;
  requestId: string;
  awsRequestId?: string;
  keyId?: string;
}

/** The id a client can quote: API Gateway's (also in its access logs), else Lambda's. */
export function requestIdOf(request: Pick<ProxyRequest, 'event' | 'context'>): string {
  return request.event?.requestContext?.requestId || request.context?.awsRequestId || 'unknown';
}

type LineWriter = (line: string) => void;

let writeLine: LineWriter = (line) => console.log(line);

/** Where the lines go: stdout by default (CloudWatch Logs when deployed); tests capture or mute them. */
export function setRequestLogWriter(write: LineWriter): void {
  writeLine = write;
}

/**
 * Must be the first middleware of the pipeline: its `after`/`onError` run last, when the response is
 * final. The clock starts with the request's context (./proxy.ts `startedAt`).
 */
export function requestLog(operation: OperationName): ProxyMiddleware {
  let coldStart = true;
  const finish = (request: ProxyRequest) => {
    const response = request.response;
    if (response) response.headers = { ...response.headers, [REQUEST_ID_HEADER]: requestIdOf(request) };
    const status = response?.statusCode ?? 500;
    const line: RequestLogLine = {
      level: status >= 500 ? 'ERROR' : 'INFO',
      message: 'request',
      operation,
      status,
      ...errorCodeOf(response),
      latencyMs: elapsedMs(request.context.startedAt),
      coldStart,
      requestId: requestIdOf(request),
      ...(request.context?.awsRequestId ? { awsRequestId: request.context.awsRequestId } : {}),
      ...(request.context.caller ? { keyId: request.context.caller.keyId } : {}),
      ...request.context.notes,
    };
    coldStart = false;
    writeLine(JSON.stringify(line));
  };
  return {
    after: finish,
    onError: finish,
  };
}

/**
 * Whole milliseconds since `since`. `process.hrtime`, not `performance.now()`: the global
 * `performance` loads Node's perf_hooks on first use, about 1.3 ms of a cold start that Lambda's
 * runtime has not paid (tools/bench/coldRequest.ts times with hrtime for the same reason).
 */
const elapsedMs = (since: bigint): number => Math.round(Number(process.hrtime.bigint() - since) / 1e6);

/** Every error answer is an Error body (`{code, message, status}`); its code is all we log of it. */
function errorCodeOf(response: APIGatewayProxyResult | null | undefined): { errorCode?: string } {
  if (!response || response.statusCode < 400) return {};
  try {
    const code = (JSON.parse(response.body) as { code?: unknown }).code;
    return typeof code === 'string' ? { errorCode: code } : {};
  } catch {
    return {};
  }
}
