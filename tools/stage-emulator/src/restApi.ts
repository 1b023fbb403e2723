/**
 * One API Gateway REST API served on loopback exactly as its CloudFormation template defines it:
 * the stage as base path, the resource tree and methods (./routing.ts), authorizers, usage plans
 * and throttling (./accessControl.ts), AWS_PROXY integrations (./proxyIntegration.ts), MOCK
 * integrations (./mockIntegration.ts) with their mapping templates (./mappingTemplates.ts), and
 * the gateway responses API Gateway answers by itself (./gatewayResponses.ts). This file is the
 * server: the request limits, one request's way through them, and the answer as it goes out.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { pairs } from '@petstore/local-kit/proxyEvent';
import {
  answerEdges,
  edgeError,
  edgeServerOptions,
  missingHost,
  sendError,
  type EdgeError,
  type EdgeErrorShape,
} from '@petstore/local-kit/httpEdges';
import { readRequestBody } from '@petstore/local-kit/requestBody';
import { targetUrl } from '@petstore/local-kit/requestTarget';
import { Throttles, accessControl, accessRefusal, type AccessControl } from './accessControl.ts';
import type { CfnTemplate } from './cloudAssembly.ts';
import { gatewayResponse } from './gatewayResponses.ts';
import type { DeployedEnvironment } from './intrinsics.ts';
import type { InvokeOutcome } from './lambdaFunction.ts';
import { mockAnswer } from './mockIntegration.ts';
import { proxyAnswer } from './proxyIntegration.ts';
import type { Answer, ApiResolver, Exchange, InvokeFunction, RestApi } from './restApiModel.ts';
import { readRestApi } from './restApiTemplate.ts';
import { methodFor } from './routing.ts';

export interface RestApiEmulatorOptions {
  template: CfnTemplate;
  resolver: ApiResolver;
  env: DeployedEnvironment;
  /** Invokes the integration target; `functionArn` is the resolved ARN from the integration Uri (the `live` alias). */
  invoke: InvokeFunction;
  port?: number;
  host?: string;
  /** Where API Gateway's execution log lines (ERROR level) go; default stderr. */
  log?: (line: string) => void;
  /** How long a client may take over its request line and headers before a 408 (default HEADERS_TIMEOUT_MS). */
  headersTimeoutMs?: number;
  /**
   * How the answers to requests that never reach a method are written (see `startRestApiEmulator`);
   * default `messageEdgeError`, API Gateway's own `{"message": ...}` shape.
   */
  edgeErrors?: EdgeErrorShape;
  /** Told of each answer sent to a request that reached the API (the alarm rehearsal's recorders); none by default. */
  onAnswered?: (answered: AnsweredRequest) => void;
}

/** One request's answer as API Gateway's metrics and access log see it. */
export interface AnsweredRequest {
  exchange: Exchange;
  answer: Answer;
  /** From the request's arrival to its answer sent (`Latency`, `$context.responseLatency`). */
  latencyMs: number;
}

/** An edge error in the shape of API Gateway's own error bodies, `{"message": ...}`. */
const messageEdgeError: EdgeErrorShape = (error, requestId) => ({
  status: error.status,
  headers: {
    'Content-Type': 'application/json',
    ...(requestId ? { 'x-amzn-RequestId': requestId } : {}),
  },
  body: JSON.stringify({ message: error.message }),
});

export interface RestApiEmulator {
  /** http://127.0.0.1:PORT/<stage> */
  url: string;
  origin: string;
  close(): Promise<void>;
}

/** The port is taken; the message is one line naming it. */
export class RestApiPortInUseError extends Error {}

/**
 * What API Gateway takes of a request's URL and headers, by the API's endpoint type (AWS, "Quotas
 * for configuring and running a REST API in API Gateway",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-execution-service-limits-table.html):
 * "Length, in characters, of the URL for a Regional API: 10240" (edge-optimized and private: 8192);
 * "Total combined size of all header values, including header names, values, any line terminators,
 * and whitespaces: 10240 Bytes" (private API: 8000).
 */
export const REQUEST_LIMITS: Readonly<Record<string, { urlCharacters: number; headerBytes: number }>> = {
  REGIONAL: { urlCharacters: 10_240, headerBytes: 10_240 },
  EDGE: { urlCharacters: 8_192, headerBytes: 10_240 },
  PRIVATE: { urlCharacters: 8_192, headerBytes: 8_000 },
};

export async function startRestApiEmulator(options: RestApiEmulatorOptions): Promise<RestApiEmulator> {
  // A rejected invoke is a failed invocation, for an authorizer and an integration alike.
  const invoke: InvokeFunction = (functionArn, event) =>
    options
      .invoke(functionArn, event)
      .catch(
        (error: unknown): InvokeOutcome => ({ kind: 'error', errorType: 'InvokeFailed', errorMessage: String(error) }),
      );
  const api = readRestApi(options.template, options.resolver, options.env);
  const access = accessControl(api, invoke);
  const throttles = new Throttles(api.methodSettings);
  const limits = requestLimits(api);
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const edgeErrors = options.edgeErrors ?? messageEdgeError;
  let domainName = '';
  // The whole answer runs in an async function: nothing a request brings can throw out of the
  // listener and end the runner. A failure while answering is API Gateway's own 500 (DEFAULT_5XX);
  // one while sending just ends the connection.
  const serveRequest = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const refused = missingHost(request) ?? overLimits(request, limits);
    if (refused) {
      request.resume();
      return sendError(response, edgeErrors(refused, randomUUID()));
    }
    const arrived = performance.now();
    const exchange = newExchange(request, api, domainName);
    const result = await answer(request, exchange, api, access, throttles, invoke, log).catch((error: unknown) => {
      log(`(${exchange.requestId}) Execution failed: ${String(error)}`);
      return gatewayResponse('DEFAULT_5XX', 'Internal server error', exchange, api);
    });
    send(response, exchange, result);
    options.onAnswered?.({ exchange, answer: result, latencyMs: performance.now() - arrived });
  };
  // What never reaches a method (what Node's parser refuses, an unknown Expect, no Host, headers
  // too slow) is answered in the shape the caller gives (`edgeErrors`; start:deployed gives the
  // service's Error, as its local API answers): API Gateway's edge answers for these are not documented.
  // Node's own header limit (16 KB by default) is raised above the API's, so that a request over
  // the API's limits reaches overLimits rather than Node's parser.
  const maxHeaderSize = limits.urlCharacters + limits.headerBytes + 1024;
  const server = createServer(
    { ...edgeServerOptions(options.headersTimeoutMs), maxHeaderSize },
    (request, response) => {
      serveRequest(request, response).catch(() => response.destroy());
    },
  );
  answerEdges(server, edgeErrors);
  server.on('connect', (request: IncomingMessage, socket: Duplex) => answerConnect(request, socket, api, domainName));
  const host = options.host ?? DEFAULT_HOST;
  const port = options.port ?? 0;
  await listen(server, port, host);
  const address = server.address() as AddressInfo;
  domainName = `${address.address}:${address.port}`;
  const origin = `http://${domainName}`;
  return {
    url: `${origin}/${api.stageName}`,
    origin,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function requestLimits(api: RestApi): (typeof REQUEST_LIMITS)[string] {
  return REQUEST_LIMITS[api.endpointType] ?? (REQUEST_LIMITS.EDGE as (typeof REQUEST_LIMITS)[string]);
}

/**
 * A request over the API's URL or header quota (REQUEST_LIMITS). How API Gateway answers one is not
 * documented, and no gateway response type covers it (AWS, "Gateway response types for API
 * Gateway", https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html):
 * the template cannot shape it. It gets what a request line or headers over Node's own limit get
 * here, the 431 HEADERS_TOO_LARGE edge error (in the `edgeErrors` shape), and the connection closes.
 * The URL is counted as the client's `https://host/path?query`; each header as `name: value` and
 * its CRLF, in bytes as sent (the blank line that ends the headers is no header).
 */
function overLimits(request: IncomingMessage, limits: (typeof REQUEST_LIMITS)[string]): EdgeError | undefined {
  const url = `https://${request.headers.host ?? ''}${request.url ?? ''}`;
  if (url.length > limits.urlCharacters) {
    return edgeError(
      'HEADERS_TOO_LARGE',
      `The request URL is longer than the ${limits.urlCharacters} characters API Gateway takes.`,
    );
  }
  const headerBytes = pairs(request.rawHeaders).reduce(
    (total, [name, value]) => total + Buffer.byteLength(name, 'latin1') + 2 + Buffer.byteLength(value, 'latin1') + 2,
    0,
  );
  if (headerBytes > limits.headerBytes) {
    return edgeError(
      'HEADERS_TOO_LARGE',
      `The request headers are larger than the ${limits.headerBytes} bytes API Gateway takes.`,
    );
  }
  return undefined;
}

/** Where the API listens unless told otherwise: this machine only. */
const DEFAULT_HOST = '127.0.0.1';

/**
 * Refuses a port already taken as starting would, but at once: start:deployed checks it before a
 * synthesis that may take minutes, not after. Port 0 (any free port) is never taken.
 */
export async function refuseTakenPort(port: number, host = DEFAULT_HOST): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await listen(probe, port, host);
  await new Promise((closed) => probe.close(closed));
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new RestApiPortInUseError(`Port ${port} on ${host} is already in use; choose another port.`)
          : error,
      ),
    );
    server.listen(port, host, () => resolve());
  });
}

// ---------------------------------------------------------------------------------------------
// One request

function newExchange(request: IncomingMessage, api: RestApi, domainName: string): Exchange {
  // A target that names no path (`http://[`, CONNECT's `host:port`, `*`) leads to no resource:
  // answered as any unknown path is (see `answer`). `//x/v1/pets` is that path, not one on host x.
  const target = targetUrl(request.url ?? '');
  const url = target ?? new URL('http://localhost');
  const stagePrefix = `/${api.stageName}`;
  const sourceIp = request.socket.remoteAddress ?? '127.0.0.1';
  const traceId = `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;
  return {
    requestId: randomUUID(),
    extendedRequestId: randomBytes(11).toString('base64'),
    traceId,
    received: new Date(),
    method: request.method ?? 'GET',
    routable: target !== undefined,
    fullPath: target ? url.pathname : (request.url ?? ''),
    path: url.pathname.startsWith(`${stagePrefix}/`)
      ? url.pathname.slice(stagePrefix.length)
      : url.pathname === stagePrefix
        ? '/'
        : url.pathname,
    query: url.searchParams,
    // What API Gateway adds in front of an integration.
    rawHeaders: [
      ...withoutHeader(request.rawHeaders, 'x-forwarded-for'),
      'X-Amzn-Trace-Id',
      traceId,
      'X-Forwarded-For',
      [request.headers['x-forwarded-for'], sourceIp].filter(Boolean).join(', '),
      'X-Forwarded-Port',
      String(request.socket.localPort ?? ''),
      'X-Forwarded-Proto',
      'http',
    ],
    sourceIp,
    domainName,
    pathParameters: {},
    body: Buffer.alloc(0),
  };
}

async function answer(
  request: IncomingMessage,
  exchange: Exchange,
  api: RestApi,
  access: AccessControl,
  throttles: Throttles,
  invoke: InvokeFunction,
  log: (line: string) => void,
): Promise<Answer> {
  const match = methodFor(api, exchange);
  // AWS, "Gateway response types for API Gateway": MISSING_AUTHENTICATION_TOKEN also answers "an
  // unsupported API method or resource" (https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html).
  if (!match) {
    request.resume();
    return gatewayResponse('MISSING_AUTHENTICATION_TOKEN', 'Missing Authentication Token', exchange, api);
  }
  const { apiMethod } = match;
  exchange.apiMethod = apiMethod;
  exchange.pathParameters = match.pathParameters;
  if (!throttles.take(apiMethod)) {
    request.resume();
    return gatewayResponse('THROTTLED', 'Too Many Requests', exchange, api);
  }
  const refusal = await accessRefusal(exchange, api, access, apiMethod);
  if (refusal) {
    request.resume();
    if (refusal.log) log(`(${exchange.requestId}) ${refusal.log}`);
    return gatewayResponse(refusal.type, refusal.message, exchange, api);
  }
  const body = await readRequestBody(request);
  if (!body) return gatewayResponse('REQUEST_TOO_LARGE', 'Request Too Long', exchange, api);
  exchange.body = body;
  const { integration } = apiMethod;
  return integration.type === 'MOCK'
    ? mockAnswer(integration, exchange, api, log)
    : proxyAnswer(integration, exchange, api, invoke, log);
}

// ---------------------------------------------------------------------------------------------
// Sending

function send(response: ServerResponse, exchange: Exchange, result: Answer): void {
  if (response.headersSent || response.destroyed) return;
  response.writeHead(result.status, answerHeaders(exchange, result));
  response.end(result.body);
}

/** The headers of an answer as it goes out: the answer's own but hop-by-hop ones, then API Gateway's. */
function answerHeaders(exchange: Exchange, result: Answer): Record<string, string | string[]> {
  const hopByHop = new Set(['connection', 'transfer-encoding', 'content-length', 'keep-alive']);
  const headers: Record<string, string[]> = Object.create(null);
  const names = new Map<string, string>();
  for (const [name, value] of result.headers) {
    const key = name.toLowerCase();
    if (hopByHop.has(key)) continue;
    const kept = names.get(key) ?? name;
    names.set(key, kept);
    headers[kept] ??= [];
    headers[kept].push(value);
  }
  // API Gateway's own headers, on every answer; whatever the function set under these names is replaced.
  for (const [name, value] of [
    ['x-amzn-RequestId', exchange.requestId],
    ['x-amz-apigw-id', exchange.extendedRequestId],
    ['X-Amzn-Trace-Id', exchange.traceId],
    ['Content-Length', String(result.body.length)],
  ] as const) {
    const existing = names.get(name.toLowerCase());
    if (existing) delete headers[existing];
    headers[name] = [value];
  }
  return Object.fromEntries(
    Object.entries(headers).map(([name, values]) => [name, values.length === 1 ? (values[0] as string) : values]),
  );
}

/**
 * For the server's `connect` event (Node hands a CONNECT only to it, with the raw socket, and
 * without a listener closes the connection unanswered). API Gateway's methods are GET, POST, PUT,
 * DELETE, PATCH, HEAD and OPTIONS (ANY stands for these): no method of the API serves a CONNECT,
 * whatever its target, so it gets what a method and path without an API method get, the
 * MISSING_AUTHENTICATION_TOKEN gateway response (the template makes it the 404 Error; API
 * Gateway's own is a 403), and the connection closes.
 */
function answerConnect(request: IncomingMessage, socket: Duplex, api: RestApi, domainName: string): void {
  socket.on('error', () => socket.destroy());
  try {
    const exchange = newExchange(request, api, domainName);
    const result = gatewayResponse('MISSING_AUTHENTICATION_TOKEN', 'Missing Authentication Token', exchange, api);
    const head = [`HTTP/1.1 ${result.status} ${STATUS_CODES[result.status] ?? 'Error'}`];
    for (const [name, value] of Object.entries(answerHeaders(exchange, result))) {
      for (const one of Array.isArray(value) ? value : [value]) head.push(`${name}: ${one}`);
    }
    head.push('Connection: close', '', '');
    socket.end(Buffer.concat([Buffer.from(head.join('\r\n'), 'latin1'), result.body]), () => socket.destroy());
  } catch {
    socket.destroy();
  }
}

function withoutHeader(rawHeaders: readonly string[], name: string): string[] {
  return pairs(rawHeaders)
    .filter(([key]) => key.toLowerCase() !== name)
    .flat();
}
