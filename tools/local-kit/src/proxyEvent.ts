/**
 * Turns an HTTP request into the API Gateway REST (payload v1) proxy event that a deployed
 * function receives, and a proxy result back into status, headers and body.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';

export interface IncomingParts {
  method: string;
  /** Path below the base path, e.g. `/pets/7`. */
  path: string;
  query: URLSearchParams;
  /** Raw header pairs, as node:http gives them in `rawHeaders`. */
  rawHeaders: readonly string[];
  body: Buffer;
  sourceIp: string;
  /**
   * The API's own address (`host[:port]`), as API Gateway gives its domain; never the client's Host.
   * Without it the next-page link is relative.
   */
  domainName?: string;
}

/**
 * The headers and query of a proxy event as API Gateway gives them: every value under
 * `multiValue…`, the last one of each name in the single-value maps, null when there is none.
 * Header names are case-insensitive (RFC 9110): `authorization` and `Authorization` are one header,
 * under the case it was first sent in, so the value an authorizer's identity source reads (the last)
 * is the value its event carries.
 */
export function headersAndQuery(rawHeaders: readonly string[], query: URLSearchParams) {
  const multiValueHeaders = groupHeaders(pairs(rawHeaders));
  const multiValueQuery = groupPairs([...query.entries()]);
  return {
    headers: lastValues(multiValueHeaders) ?? {},
    multiValueHeaders,
    queryStringParameters: lastValues(multiValueQuery),
    multiValueQueryStringParameters: Object.keys(multiValueQuery).length ? multiValueQuery : null,
  };
}

/** The API method an event is for: its resource path (`/pets/{id}`) and the resource's id (the operation). */
export interface ProxyRoute {
  path: string;
  operation: string;
}

/** Where the API is served: its base path (`/v1`) and the stage name its events carry. */
export interface ProxyStage {
  basePath: string;
  stageName: string;
}

export function toProxyEvent(
  parts: IncomingParts,
  route: ProxyRoute,
  pathParameters: Record<string, string>,
  stage: ProxyStage,
): APIGatewayProxyEvent {
  const fromRequest = headersAndQuery(parts.rawHeaders, parts.query);
  const requestId = randomUUID();
  const now = new Date();
  const { body, isBase64Encoded } = encodeBody(parts.body);
  return {
    resource: route.path,
    path: parts.path,
    httpMethod: parts.method,
    ...fromRequest,
    pathParameters: Object.keys(pathParameters).length ? pathParameters : null,
    stageVariables: null,
    body,
    isBase64Encoded,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      ...(parts.domainName ? { domainName: parts.domainName } : {}),
      httpMethod: parts.method,
      path: `${stage.basePath}${parts.path}`,
      protocol: 'HTTP/1.1',
      requestId,
      requestTime: now.toUTCString(),
      requestTimeEpoch: now.getTime(),
      resourceId: route.operation,
      resourcePath: route.path,
      stage: stage.stageName,
      identity: localIdentity(parts.sourceIp, fromRequest.multiValueHeaders['user-agent']?.[0] ?? null),
    },
  };
}

/** A Lambda context good enough for handlers run outside Lambda. */
export function localContext(functionName: string, timeoutMs = 10_000): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '256',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Headers of a proxy result as node:http wants them, multi-value headers included. */
export function resultHeaders(result: APIGatewayProxyResult): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) headers[name] = values.map(String);
  return headers;
}

export const resultBody = (result: APIGatewayProxyResult): Buffer =>
  Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8');

/**
 * The body as API Gateway hands it to a proxy function when the API declares no binary media types
 * (this one declares none): UTF-8 text, each sequence that is not UTF-8 replaced by U+FFFD ("Content
 * type conversions in API Gateway"; the emulator does the same), so a bad byte meets the same
 * refusal here as on AWS.
 */
export function encodeBody(raw: Buffer): { body: string | null; isBase64Encoded: boolean } {
  return raw.length === 0
    ? { body: null, isBase64Encoded: false }
    : { body: raw.toString('utf8'), isBase64Encoded: false };
}

export function pairs(flat: readonly string[]): [string, string][] {
  const result: [string, string][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) result.push([flat[i] as string, flat[i + 1] as string]);
  return result;
}

export function groupPairs(entries: [string, string][]): Record<string, string[]> {
  // No prototype: a parameter or header named `toString`, `constructor` or `__proto__` is just a name.
  const grouped: Record<string, string[]> = Object.create(null);
  for (const [name, value] of entries) {
    grouped[name] ??= [];
    grouped[name].push(value);
  }
  return grouped;
}

/** Header values grouped by name without regard to case, under the first case each was sent in. */
function groupHeaders(entries: [string, string][]): Record<string, string[]> {
  const caseSent = new Map<string, string>();
  return groupPairs(
    entries.map(([name, value]) => {
      const lower = name.toLowerCase();
      if (!caseSent.has(lower)) caseSent.set(lower, name);
      return [caseSent.get(lower)!, value];
    }),
  );
}

export function lastValues(grouped: Record<string, string[]>): Record<string, string> | null {
  const entries = Object.entries(grouped).map(([name, values]) => [name, values.at(-1) ?? ''] as const);
  return entries.length ? Object.fromEntries(entries) : null;
}

export function localIdentity(
  sourceIp: string,
  userAgent: string | null,
): APIGatewayProxyEvent['requestContext']['identity'] {
  return {
    accessKey: null,
    accountId: null,
    apiKey: null,
    apiKeyId: null,
    caller: null,
    clientCert: null,
    cognitoAuthenticationProvider: null,
    cognitoAuthenticationType: null,
    cognitoIdentityId: null,
    cognitoIdentityPoolId: null,
    principalOrgId: null,
    sourceIp,
    user: null,
    userAgent,
    userArn: null,
  };
}
