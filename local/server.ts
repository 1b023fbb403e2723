/**
 * The local API: `npm start`. Each HTTP request becomes the API Gateway proxy event the deployed
 * function would get, the same handler module answers it, and its result goes back as the response.
 * Unknown paths answer 404 and known paths with another method 405 with `Allow`, as the deployed API does.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Handler } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isAbsolute, relative } from 'node:path';
import { CORS_ORIGINS_VARIABLE, parseOrigins, preflightHeaders } from '../lib/http/cors.ts';
import { ApiError } from '../lib/domain/errors.ts';
import { REQUEST_ID_HEADER } from '../lib/http/requestLog.ts';
import { errorResponse } from '../lib/http/responses.ts';
import { API_BASE_PATH, matchRoute, routes, type Route } from '../lib/domain/routes.ts';
import { docsAnswer } from './docs.ts';
import { LocalSetupError, prepareLocalEnvironment, type LocalEnvironment } from './environment.ts';
import { answerEdges, missingHost, sendError } from './httpEdges.ts';
import { isEntryPoint } from './entryPoint.ts';
import { loadHandler } from './handlers.ts';
import { readRequestBody } from './requestBody.ts';
import type { Service } from '../lib/service.ts';
import { localContext, resultBody, resultHeaders, toProxyEvent } from './proxyEvent.ts';


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
  serviceOverrides?: Partial<Service>;
}

export async function startLocalApi(options: LocalApiOptions = {}): Promise<LocalApi> {
  const local = await prepareLocalEnvironment();
  const load = (route: Route) => loadHandler(route, local.env, options.serviceOverrides);
  const handlers = new Map(await Promise.all(routes.map(async (route) => [route, await load(route)] as const)));

  let domainName = '';
  const corsOrigins = parseOrigins(local.env[CORS_ORIGINS_VARIABLE]);
  // requireHostHeader: false lets a Host-less HTTP/1.1 request through, to get a JSON 400 below.
  const server = createServer({ requireHostHeader: false }, (request, response) => {
    const started = Date.now();
    const refused = missingHost(request);
    if (refused) return sendError(response, refused);
    const docs = request.method === 'GET' ? docsAnswer(new URL(request.url ?? '/', 'http://localhost').pathname, `http://${domainName}${API_BASE_PATH}`) : undefined;
    if (docs) return send(response, { statusCode: docs.status, headers: docs.headers, body: docs.body.toString('base64'), isBase64Encoded: true });
    // The local API's own answers (404, 405, 413, 502) get an id too, as API Gateway's do.
    const edgeRequestId = randomUUID();
    serve(request, handlers, domainName, corsOrigins)
      .catch((error: unknown) => {
        if (request.socket.destroyed) return undefined; // the client went away (or sent a broken body): nobody to answer
        console.error(JSON.stringify({ level: 'ERROR', message: 'local API failure', error: String(error) }));
        return errorResponse(new ApiError('BAD_GATEWAY', 'The function failed to answer.'), edgeRequestId);
      })
      .then((result) => {
        if (!result) return;
        result.headers = { [REQUEST_ID_HEADER]: edgeRequestId, ...result.headers };
        send(response, result);
        if (!options.quiet) console.log(`${request.method} ${request.url} -> ${result.statusCode} (${Date.now() - started} ms)`);
      });
  });
  answerEdges(server);
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
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
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
          ? new PortInUseError(`Port ${port} on ${host} is already in use. Stop what uses it, or choose another port: PORT=${port + 1} npm start`)
          : error,
      );
    });
    server.listen(port, host, () => resolve());
  });
}

async function serve(
  request: IncomingMessage,
  handlers: Map<Route, Handler>,
  domainName: string,
  corsOrigins: readonly string[],
): Promise<APIGatewayProxyResult> {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const method = request.method ?? 'GET';
  const below = url.pathname.startsWith(`${API_BASE_PATH}/`) ? url.pathname.slice(API_BASE_PATH.length) : undefined;
  const match = below === undefined ? ({ kind: 'notFound' } as const) : matchRoute(method, below);
  if (match.kind === 'notFound') {
    request.resume();
    return errorResponse(new ApiError('NOT_FOUND', `No resource at ${url.pathname}.`));
  }
  if (match.kind === 'methodNotAllowed') {
    request.resume();
    // A CORS preflight, answered in front of the functions as API Gateway does (only when origins are set).
    const preflight = method === 'OPTIONS' ? preflightHeaders(request.headers.origin, match.allow, corsOrigins) : undefined;
    if (preflight) return { statusCode: 204, headers: preflight, body: '' };
    const allow = match.allow.join(', ');
    return errorResponse(new ApiError('METHOD_NOT_ALLOWED', `${method} is not allowed here; use ${allow}.`, { Allow: allow }));
  }
  const body = await readRequestBody(request);
  if (body === undefined) return errorResponse(new ApiError('PAYLOAD_TOO_LARGE', 'The request body is too large.'));
  const { route, pathParameters } = match;
  const event = toProxyEvent(
    {
      method,
      path: below as string,
      query: url.searchParams,
      rawHeaders: [...request.rawHeaders, ...forwardedHeaders(request)],
      body,
      sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
      domainName,
    },
    route,
    pathParameters,
  );
  const handler = handlers.get(route) as Handler<APIGatewayProxyEvent, APIGatewayProxyResult>;
  return (await handler(event, localContext(route.operation), () => undefined)) as APIGatewayProxyResult;
}

/** What API Gateway adds in front of a function. */
function forwardedHeaders(request: IncomingMessage): string[] {
  return [
    'X-Forwarded-Proto', 'http',
    'X-Forwarded-For', request.socket.remoteAddress ?? '127.0.0.1',
    'X-Forwarded-Port', String(request.socket.localPort ?? ''),
  ];
}


function send(response: ServerResponse, result: APIGatewayProxyResult): void {
  const body = resultBody(result);
  response.writeHead(result.statusCode, { ...resultHeaders(result), 'Content-Length': String(body.length) });
  response.end(body);
}

async function main(): Promise<void> {
  let api: LocalApi;
  try {
    api = await startLocalApi({ port: Number(process.env.PORT ?? 3000) });
  } catch (error) {
    if (!(error instanceof LocalSetupError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
  const { store, generatedApiKey, apiKeyFile } = api.local;
  const key = generatedApiKey ?? '<one of PETSTORE_API_KEYS>';
  console.log(`Pet Store API listening on ${api.url}`);
  console.log(`Store: ${store.embedded ? 'embedded dynalite' : 'DynamoDB endpoint'} ${store.endpoint}${store.persistent ? '' : ' (in memory)'}`);
  if (apiKeyFile) console.log(`PETSTORE_API_KEYS is not set; API key kept in ${displayPath(apiKeyFile)}: ${generatedApiKey}`);
  else if (generatedApiKey) console.log(`PETSTORE_API_KEYS is not set; generated API key for this run: ${generatedApiKey}`);
  console.log('Try:');
  console.log(`  curl -s -X POST ${api.url}/pets -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' -d '{"name":"Rex","categoryId":1,"status":"available"}'`);
  console.log(`  curl -s '${api.url}/pets?limit=20&status=available' -H 'Authorization: Bearer ${key}'`);
  console.log(`Docs: ${api.url.replace(API_BASE_PATH, '')}/docs (OpenAPI document: ${api.url.replace(API_BASE_PATH, '')}/openapi.json)`);
  stopOnSignals(api);
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
