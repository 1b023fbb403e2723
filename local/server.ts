/**
 * The local API: `npm start`. Each HTTP request becomes the API Gateway proxy event the deployed
 * function would get, the same handler module answers it, and its result goes back as the response.
 * Unknown paths answer 404 and known paths with another method 405 with `Allow`, as the deployed API does.
 */
import './requireNode22.mjs';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Handler } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { isAbsolute, relative } from 'node:path';
import { BEARER_CHALLENGE, MISSING_OR_INVALID_KEY_MESSAGE } from '../lib/http/authorizer.ts';
import { CORS_ORIGINS_VARIABLE, parseOrigins, preflightHeaders } from '../lib/http/cors.ts';
import { ApiError } from '../lib/domain/errors.ts';
import { REQUEST_ID_HEADER } from '../lib/http/requestLog.ts';
import { errorResponse, HARDENING_HEADERS } from '../lib/http/responses.ts';
import {
  API_BASE_PATH,
  API_STAGE,
  matchRoute,
  methodNotAllowedMessage,
  NOT_FOUND_MESSAGE,
  routes,
  type Route,
  type RouteMatch,
} from '../lib/domain/routes.ts';
import { DOCS_PATH, OPENAPI_PATH, docsAnswer } from './docs.ts';
import { apiErrorAnswer } from './errorAnswer.ts';
import { LocalSetupError, prepareLocalEnvironment, type LocalEnvironment } from './environment.ts';
import {
  answerEdges,
  edgeServerOptions,
  missingHost,
  rawErrorResponse,
  sendError,
} from '@petstore/local-kit/httpEdges';
import { isEntryPoint } from './entryPoint.ts';
import { loadHandler } from './handlers.ts';
import { parsePort } from '@petstore/local-kit/port';
import { readRequestBody } from '@petstore/local-kit/requestBody';
import { bodyLimitOf, bodyRefusal } from '../lib/http/bodyLimits.ts';
import type { Dependencies } from '../lib/service.ts';
import { routingPath, targetUrl } from '@petstore/local-kit/requestTarget';
import { localContext, resultBody, resultHeaders, toProxyEvent } from '@petstore/local-kit/proxyEvent';

export interface LocalApi {
  url: string;
  local: LocalEnvironment;
  close(): Promise<void>;
}

export interface LocalApiOptions {
  port?: number;
  host?: string;
  quiet?: boolean;
  /** Parts of the functions' service to replace (tests only: ids that collide on purpose). */
  serviceOverrides?: Partial<Dependencies>;
  /** How long a client may take over its request line and headers before a 408 (default HEADERS_TIMEOUT_MS). */
  headersTimeoutMs?: number;
}

export async function startLocalApi(options: LocalApiOptions = {}): Promise<LocalApi> {
  const local = await prepareLocalEnvironment();
  const load = (route: Route) => loadHandler(route, local.env, options.serviceOverrides);
  const handlers = new Map(await Promise.all(routes.map(async (route) => [route, await load(route)] as const)));

  let domainName = '';
  let stopping = false;
  const corsOrigins = parseOrigins(local.env[CORS_ORIGINS_VARIABLE]);
  const respond = async (request: IncomingMessage, response: ServerResponse, requestId: string): Promise<void> => {
    const started = Date.now();
    const refused = missingHost(request);
    if (refused) return sendError(response, apiErrorAnswer(refused, requestId));
    const url = targetUrl(request.url ?? '');
    const docs =
      url && request.method === 'GET' ? docsAnswer(url.pathname, `http://${domainName}${API_BASE_PATH}`) : undefined;
    const result = docs
      ? { statusCode: docs.status, headers: docs.headers, body: docs.body.toString('base64'), isBase64Encoded: true }
      : await serve(request, url, handlers, domainName, corsOrigins, requestId);
    if (!result) return;
    // A gateway response (the refused key's) carries API Gateway's x-amzn-RequestId instead.
    if (!result.headers?.['x-amzn-RequestId']) result.headers = { [REQUEST_ID_HEADER]: requestId, ...result.headers };
    // An answer given during a stop ends its connection: no more requests are read from it.
    if (stopping) response.shouldKeepAlive = false;
    send(response, result);
    if (!options.quiet)
      console.log(`${request.method} ${request.url} -> ${result.statusCode} (${Date.now() - started} ms)`);
  };
  const server = createServer(edgeServerOptions(options.headersTimeoutMs), (request, response) => {
    // Every answer, the local API's own included (400, 404, 405, 413, 500, 502), gets an id, as API Gateway's do.
    const requestId = randomUUID();
    guard(request, response, requestId, () => respond(request, response, requestId));
  });
  server.on('connect', answerConnect);
  answerEdges(server, apiErrorAnswer);
  try {
    await listen(server, options.port ?? 3000, options.host ?? '127.0.0.1');
  } catch (error) {
    await local.close();
    throw error;
  }
  const { address, port } = server.address() as AddressInfo;
  domainName = `${address}:${port}`;
  return {
    url: `http://${address}:${port}${API_BASE_PATH}`,
    local,
    close: async () => {
      stopping = true;
      // Stops listening and closes idle keep-alive connections; requests in flight are answered
      // (with Connection: close, see send) and the store closes only once they are.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
      await local.close();
    },
  };
}

/** Thrown when the port is taken: says which, and how to choose another. */
export class PortInUseError extends LocalSetupError {}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new PortInUseError(
              `Port ${port} on ${host} is already in use. Stop what uses it, or choose another port: PORT=${port + 1} ${process.env.PETSTORE_COMMAND || 'npm start'}`,
            )
          : error,
      );
    });
    server.listen(port, host, () => resolve());
  });
}

/**
 * For the request listener: runs `respond` so that nothing escapes it, neither a throw nor a
 * rejection. What does is a bug of the local API itself (a client's mistake is answered 4xx before
 * it gets there): logged as one JSON line, answered 500 INTERNAL when no answer has started, and
 * the connection cut when one has. A client gone is no bug: there is nobody to answer.
 */
function guard(
  request: IncomingMessage,
  response: ServerResponse,
  requestId: string,
  respond: () => Promise<void>,
): void {
  let answered: Promise<void>;
  try {
    answered = respond();
  } catch (error) {
    answered = Promise.reject(error);
  }
  answered.catch((error: unknown) => {
    if (request.socket.destroyed) return;
    const stack = error instanceof Error ? error.stack : undefined;
    console.error(JSON.stringify({ level: 'ERROR', message: 'local API bug', requestId, error: String(error), stack }));
    try {
      if (response.headersSent) response.destroy();
      else
        sendError(
          response,
          apiErrorAnswer(new ApiError('INTERNAL', 'An unexpected error occurred; it has been logged.'), requestId),
        );
    } catch {
      response.destroy();
    }
  });
}

/**
 * For the server's `connect` event: the local API is no proxy, so a CONNECT is answered as any
 * other method on its target is (its authority form, `host:port`, names no path: 400; a path: 404
 * or 405), then the connection is closed. Node hands CONNECT only to this event, with the raw
 * socket: without a listener it closes the connection unanswered.
 */
function answerConnect(request: IncomingMessage, socket: Duplex): void {
  const url = targetUrl(request.url ?? '');
  const error = url ? refusal(request.method ?? 'CONNECT', url) : notAPath();
  socket.on('error', () => socket.destroy());
  if (!socket.writable) return void socket.destroy();
  socket.end(rawErrorResponse(apiErrorAnswer(error ?? notAPath())), () => socket.destroy());
}

const notAPath = () =>
  new ApiError('VALIDATION_FAILED', 'The request target is not a path (such as /v1/pets) or an absolute http URL.');

/**
 * Where `url` leads for `method`: a route below the base path, or what the path names: nothing, or
 * other methods. Routed by its routing path (`/v1//pets/` is `/v1/pets`, as on API Gateway):
 * `routed` is that path below the base path, `below` the path below it as sent, which the event carries.
 */
function locate(method: string, url: URL): { below: string; routed: string; match: RouteMatch } {
  const path = routingPath(url.pathname);
  const routed = path.startsWith(`${API_BASE_PATH}/`) ? path.slice(API_BASE_PATH.length) : undefined;
  if (routed === undefined) return { below: url.pathname, routed: path, match: { kind: 'notFound' } };
  const below = url.pathname.startsWith(`${API_BASE_PATH}/`) ? url.pathname.slice(API_BASE_PATH.length) : routed;
  return { below, routed, match: matchRoute(method, routed) };
}

const ROOT_MESSAGE = `Nothing is served at /: the API is under ${API_BASE_PATH} (e.g. GET ${API_BASE_PATH}/pets); its documentation is at ${DOCS_PATH} (OpenAPI document: ${OPENAPI_PATH}).`;

/** The Error for a method and target no route serves (404, 405 with Allow), or undefined when one does. */
function refusal(method: string, url: URL): ApiError | undefined {
  const { match, routed } = locate(method, url);
  // The deployed API's messages (its 404 and 405 mocks), so a client reads the same on both.
  // `/` itself: where a newcomer's browser lands first, told where the API and its docs are.
  if (match.kind === 'notFound')
    return new ApiError('NOT_FOUND', url.pathname === '/' ? ROOT_MESSAGE : NOT_FOUND_MESSAGE);
  if (match.kind === 'methodNotAllowed') {
    const resource = routes.find((route) => matchRoute(route.method, routed, [route]).kind === 'found')?.path ?? routed;
    return new ApiError('METHOD_NOT_ALLOWED', methodNotAllowedMessage(method, resource, match.allow), {
      Allow: match.allow.join(', '),
    });
  }
  return undefined;
}

/** The answer to a request no documentation path took; undefined when the client went away. */
async function serve(
  request: IncomingMessage,
  url: URL | undefined,
  handlers: Map<Route, Handler>,
  domainName: string,
  corsOrigins: readonly string[],
  requestId: string,
): Promise<APIGatewayProxyResult | undefined> {
  const method = request.method ?? 'GET';
  if (!url) {
    request.resume();
    return errorResponse(notAPath());
  }
  const { below, match } = locate(method, url);
  if (match.kind !== 'found') {
    request.resume();
    // A CORS preflight, answered in front of the functions as API Gateway does (only when origins are set).
    const preflight =
      method === 'OPTIONS' && match.kind === 'methodNotAllowed'
        ? preflightHeaders(request.headers.origin, match.allow, corsOrigins)
        : undefined;
    if (preflight) return { statusCode: 204, headers: preflight, body: '' };
    return errorResponse(refusal(method, url) as ApiError);
  }
  // Size before anything else reads the request, as production's web ACL does in front of it.
  const body = await readRequestBody(request, bodyLimitOf(method));
  if (body === undefined) return errorResponse(bodyRefusal(method, Infinity) as ApiError);
  const { route, pathParameters } = match;
  const event = toProxyEvent(
    {
      method,
      path: below,
      query: url.searchParams,
      rawHeaders: [...request.rawHeaders, ...forwardedHeaders(request)],
      body,
      sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
      domainName,
    },
    route,
    pathParameters,
    API_STAGE,
  );
  const handler = handlers.get(route) as Handler<APIGatewayProxyEvent, APIGatewayProxyResult>;
  try {
    const result = (await handler(event, localContext(route.operation), () => undefined)) as APIGatewayProxyResult;
    return result.statusCode === 401 ? asKeyAuthorizerRefusal(result, requestId) : result;
  } catch (error) {
    if (request.socket.destroyed) return undefined; // the client went away: nobody to answer
    // The function itself failed (API Gateway answers that 502 too); the local API is fine.
    console.error(
      JSON.stringify({ level: 'ERROR', message: 'function failed to answer', requestId, error: String(error) }),
    );
    return errorResponse(new ApiError('BAD_GATEWAY', 'The function failed to answer.'), requestId);
  }
}

/**
 * On AWS a refused key never reaches a function: the key authorizer refuses it and API Gateway
 * answers its UNAUTHORIZED gateway response, one message and the bare challenge whatever the reason
 * (infra/gatewayErrors.ts), with API Gateway's own request id and error type, and none of a
 * function's headers (no X-Request-Id, no getPet deprecation headers). The local API has no
 * authorizer in front; the function's own check (the same code) refuses the same keys, and its 401
 * is answered as the gateway would.
 */
function asKeyAuthorizerRefusal(functionAnswer: APIGatewayProxyResult, requestId: string): APIGatewayProxyResult {
  const refusal = errorResponse(new ApiError('UNAUTHORIZED', MISSING_OR_INVALID_KEY_MESSAGE));
  // Of the function's headers only CORS for an allowed origin stays: the gateway response has it too.
  const cors = Object.fromEntries(
    Object.entries(functionAnswer.headers ?? {}).filter(([name]) => /^(access-control-|vary$)/i.test(name)),
  );
  return {
    ...refusal,
    headers: {
      ...cors,
      ...refusal.headers,
      'WWW-Authenticate': BEARER_CHALLENGE,
      'x-amzn-RequestId': requestId,
      'x-amzn-ErrorType': 'UnauthorizedException',
    },
  };
}

/** What API Gateway adds in front of a function. */
function forwardedHeaders(request: IncomingMessage): string[] {
  return [
    'X-Forwarded-Proto',
    'http',
    'X-Forwarded-For',
    request.socket.remoteAddress ?? '127.0.0.1',
    'X-Forwarded-Port',
    String(request.socket.localPort ?? ''),
  ];
}

function send(response: ServerResponse, result: APIGatewayProxyResult): void {
  const body = resultBody(result);
  response.writeHead(result.statusCode, {
    ...resultHeaders(result),
    ...HARDENING_HEADERS,
    'Content-Length': String(body.length),
  });
  response.end(body);
}

async function main(): Promise<void> {
  const given = process.argv.slice(2);
  if (given.length > 0) {
    // `npm start -- --port 4000` would otherwise start on 3000 and say nothing of the flag.
    console.error(
      `npm start takes no arguments, not "${given.join(' ')}": its settings are environment variables, e.g. PORT=4000 npm start (docs/local-development.md#npm-start)`,
    );
    process.exit(2);
  }
  let api: LocalApi;
  try {
    api = await startLocalApi({ port: parsePort(process.env.PORT, 3000, 'PORT') });
  } catch (error) {
    if (!(error instanceof LocalSetupError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
  // Before the start lines: a supervisor may send its stop as soon as it reads them.
  stopOnSignals(api);
  const { store, generatedApiKey, apiKeyFile } = api.local;
  const key = generatedApiKey ?? '<one of PETSTORE_API_KEYS>';
  console.log(`Pet Store API listening on ${api.url}`);
  console.log(`Store: ${storeLine(store)}`);
  if (apiKeyFile)
    console.log(`PETSTORE_API_KEYS is not set; API key kept in ${displayPath(apiKeyFile)}: ${generatedApiKey}`);
  else if (generatedApiKey)
    console.log(`PETSTORE_API_KEYS is not set; generated API key for this run: ${generatedApiKey}`);
  console.log('Try:');
  console.log(
    `  curl -s -X POST ${api.url}/pets -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' -d '{"name":"Rex","categoryId":1,"status":"available"}'`,
  );
  console.log(`  curl -s '${api.url}/pets?limit=20&status=available' -H 'Authorization: Bearer ${key}'`);
  console.log(
    `Docs: ${api.url.replace(API_BASE_PATH, '')}/docs (OpenAPI document: ${api.url.replace(API_BASE_PATH, '')}/openapi.json)`,
  );
  // Sharing a store whose holder has stopped: its port may be anyone's now, so no more writes through it.
  void api.local.holderGone?.then(() => {
    console.error(
      `The local API holding the store of ${displayPath(store.sharedWith ?? '')} has stopped; this one, which shared it, stops too: start it again to hold the store.`,
    );
    void api.close().finally(() => process.exit(1));
  });
}

/** What the store is, for the start lines: whose it is, where, and whether it persists. */
function storeLine(store: LocalEnvironment['store']): string {
  if (store.sharedWith)
    return `the store of the local API already running on ${displayPath(store.sharedWith)} (${store.endpoint})`;
  return `${store.embedded ? 'embedded dynalite' : 'DynamoDB endpoint'} ${store.endpoint}${store.persistent ? '' : ' (in memory)'}`;
}

/** `file` relative to the working directory when it is below it (`.data/api-key`), else as it is. */
function displayPath(file: string): string {
  const below = relative(process.cwd(), file);
  return below && !below.startsWith('..') && !isAbsolute(below) ? below : file;
}

/** How long a stop may take before the process exits anyway. */
const STOP_DEADLINE_MS = 1_500;

/**
 * SIGINT or SIGTERM closes every connection, the server and the embedded store, then exits.
 * A repeated signal is expected (Ctrl-C reaches this process from the terminal and again from npm,
 * which forwards it) and changes nothing; the deadline bounds a close that hangs.
 */
function stopOnSignals(api: LocalApi): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping`);
    setTimeout(() => {
      console.error(`Not stopped within ${STOP_DEADLINE_MS} ms; exiting anyway.`);
      process.exit(1);
    }, STOP_DEADLINE_MS).unref();
    api.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`Stopping failed: ${String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (isEntryPoint(import.meta.url)) await main();
