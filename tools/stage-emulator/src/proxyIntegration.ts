/**
 * The AWS_PROXY Lambda integration of a REST API (AWS, "Set up Lambda proxy integrations in API
 * Gateway"): the function invoked only under a Lambda permission for the method, within the
 * integration's timeout; the payload 1.0 event (binary media types base64); the proxy result read
 * as API Gateway reads it (a malformed one is a 502), its headers remapped or dropped as API
 * Gateway does; Lambda's own refusals and a function's errors answered through gateway responses.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { encodeBody, headersAndQuery } from '@petstore/local-kit/proxyEvent';
import { permits } from './accessControl.ts';
import { gatewayResponse } from './gatewayResponses.ts';
import { THROTTLED_OUTCOME } from './lambdaFunction.ts';
import { contextVariables } from './mappingTemplates.ts';
import {
  executeApiArn,
  isRecord,
  mediaType,
  requestHeader,
  type Answer,
  type ApiMethod,
  type Exchange,
  type Integration,
  type InvokeFunction,
  type RestApi,
} from './restApiModel.ts';

export async function proxyAnswer(
  integration: Extract<Integration, { type: 'AWS_PROXY' }>,
  exchange: Exchange,
  api: RestApi,
  invoke: InvokeFunction,
  log: (line: string) => void,
): Promise<Answer> {
  const method = exchange.apiMethod as ApiMethod;
  // The ARN API Gateway invokes the function as: the method's own HTTP method (`ANY` stays `ANY`)
  // and resource path with its `{param}` parts as written. CDK's grants put `*` where the
  // parameters are, which matches either way.
  const sourceArn = executeApiArn(api, `${api.stageName}/${method.httpMethod}${method.resource.path}`);
  if (!permits(api.permissions, integration.functionArn, sourceArn, api.env.accountId)) {
    log(
      `(${exchange.requestId}) Execution failed due to configuration error: Invalid permissions on Lambda function (${integration.functionArn} for ${sourceArn})`,
    );
    return gatewayResponse('API_CONFIGURATION_ERROR', 'Internal server error', exchange, api);
  }
  const calledAt = performance.now();
  const invocation = invoke(integration.functionArn, proxyEvent(exchange, api));
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), integration.timeoutMs);
  });
  const outcome = await Promise.race([invocation, timedOut]);
  clearTimeout(timer);
  exchange.integrationLatencyMs = performance.now() - calledAt;
  if (outcome === 'timeout') {
    log(`(${exchange.requestId}) Execution failed due to a timeout error (${integration.timeoutMs} ms)`);
    return gatewayResponse('INTEGRATION_TIMEOUT', 'Endpoint request timed out', exchange, api);
  }
  if (outcome.kind === 'error' && outcome.errorType === 'RequestEntityTooLargeException') {
    // Lambda refused the event (over its 6 MB invoke limit, under API Gateway's 10 MB): a 413, not a 5xx.
    log(`(${exchange.requestId}) Execution failed: ${outcome.errorMessage}`);
    return gatewayResponse('REQUEST_TOO_LARGE', 'Request Too Long', exchange, api, 413);
  }
  // Lambda refused the invocation (throttled past the function's reserved concurrency): nothing ran.
  // AWS, "Handling Lambda errors with an API Gateway API": "If the Lambda API rejects the invocation
  // request, API Gateway returns a 500 error code", body {"message": "Internal server error"}
  // (https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html); the response type
  // is INTEGRATION_FAILURE, so a template that customizes it shapes this answer too.
  if (outcome.kind === 'error' && outcome.errorType === THROTTLED_OUTCOME.errorType) {
    log(
      `(${exchange.requestId}) Lambda invocation failed with status: 429 (${outcome.reason ?? outcome.errorType}): ${outcome.errorMessage}`,
    );
    return gatewayResponse('INTEGRATION_FAILURE', 'Internal server error', exchange, api, 500);
  }
  // A function error, its own timeout included, is no proxy result: 502 through INTEGRATION_FAILURE
  // (AWS, "Set up Lambda proxy integrations in API Gateway": "If the function output is of a
  // different format, API Gateway returns a 502 Bad Gateway error response";
  // https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html).
  if (outcome.kind !== 'ok') {
    log(
      `(${exchange.requestId}) Lambda execution failed with status 200 due to customer function error: ${outcome.errorMessage}`,
    );
    return gatewayResponse('INTEGRATION_FAILURE', 'Internal server error', exchange, api, 502);
  }
  const result = proxyResult(outcome.payload, acceptsBinary(exchange, api));
  if (!result) {
    log(`(${exchange.requestId}) Execution failed due to configuration error: Malformed Lambda proxy response`);
    return gatewayResponse('INTEGRATION_FAILURE', 'Internal server error', exchange, api, 502);
  }
  return result;
}

type RestProxyEvent = Omit<APIGatewayProxyEvent, 'requestContext'> & {
  requestContext: Omit<APIGatewayProxyEvent['requestContext'], 'authorizer'> & { authorizer?: Record<string, unknown> };
};

function proxyEvent(exchange: Exchange, api: RestApi): RestProxyEvent {
  const method = exchange.apiMethod as ApiMethod;
  // A REST API passes a body as text unless its Content-Type is one of the API's binary media types
  // (AWS, "Binary media types for REST APIs"); this stack declares none.
  const empty = exchange.body.length === 0;
  const { body, isBase64Encoded } = isBinary(exchange, api)
    ? { body: empty ? null : exchange.body.toString('base64'), isBase64Encoded: !empty }
    : encodeBody(exchange.body);
  return {
    resource: method.resource.path,
    path: exchange.path,
    httpMethod: exchange.method,
    ...headersAndQuery(exchange.rawHeaders, exchange.query),
    pathParameters: Object.keys(exchange.pathParameters).length ? exchange.pathParameters : null,
    stageVariables: api.stageVariables,
    requestContext: {
      ...(contextVariables(exchange, api) as unknown as RestProxyEvent['requestContext']),
      // A Lambda authorizer's principalId and context, as a REST API hands them to the integration.
      ...(exchange.authorization
        ? { authorizer: { principalId: exchange.authorization.principalId, ...exchange.authorization.context } }
        : {}),
    },
    body,
    isBase64Encoded,
  };
}

/** A request whose Content-Type is one of the API's binary media types goes to the function base64. */
function isBinary(exchange: Exchange, api: RestApi): boolean {
  return isBinaryType(mediaType(requestHeader(exchange, 'content-type')), api);
}

/**
 * Whether a base64 proxy answer is decoded for this client: only when the first type of its
 * `Accept` is one of the API's binary media types ("Return binary media from a Lambda proxy
 * integration"); otherwise the client gets the base64 text.
 */
function acceptsBinary(exchange: Exchange, api: RestApi): boolean {
  return isBinaryType(mediaType(requestHeader(exchange, 'accept')?.split(',')[0]), api);
}

const isBinaryType = (type: string | undefined, api: RestApi): boolean =>
  type !== undefined && api.binaryMediaTypes.some((binary) => binary === '*/*' || binary.toLowerCase() === type);

const PROXY_RESULT_FIELDS = new Set(['statusCode', 'headers', 'multiValueHeaders', 'body', 'isBase64Encoded']);

/**
 * The response a proxy result stands for, or undefined when API Gateway would call it malformed:
 * not an object, a field it does not know, a status that is not a whole number, a body that is not
 * a string, a header value that is not a string or boolean.
 */
function proxyResult(payload: unknown, decodeBinary: boolean): Answer | undefined {
  if (!isRecord(payload) || Object.keys(payload).some((key) => !PROXY_RESULT_FIELDS.has(key))) return undefined;
  const { statusCode = 200, headers, multiValueHeaders, body, isBase64Encoded = false } = payload;
  const status = typeof statusCode === 'string' && /^\d+$/.test(statusCode) ? Number(statusCode) : statusCode;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) return undefined;
  if (body !== undefined && body !== null && typeof body !== 'string') return undefined;
  if (typeof isBase64Encoded !== 'boolean') return undefined;
  const single = headers === undefined || headers === null ? {} : headers;
  const multi = multiValueHeaders === undefined || multiValueHeaders === null ? {} : multiValueHeaders;
  if (!isRecord(single) || !Object.entries(single).every(([name, value]) => isHeaderName(name) && isHeaderValue(value)))
    return undefined;
  if (
    !isRecord(multi) ||
    !Object.entries(multi).every(
      ([name, values]) => isHeaderName(name) && Array.isArray(values) && values.every(isHeaderValue),
    )
  ) {
    return undefined;
  }
  // Both maps merge; where a name is in both, the multi-value list wins.
  const merged = new Map<string, [string, string[]]>();
  for (const [name, value] of Object.entries(single)) merged.set(name.toLowerCase(), [name, [String(value)]]);
  for (const [name, values] of Object.entries(multi))
    merged.set(name.toLowerCase(), [name, (values as unknown[]).map(String)]);
  if (!merged.has('content-type')) merged.set('content-type', ['Content-Type', ['application/json']]);
  return {
    status,
    headers: [...merged.values()].flatMap(([name, values]) => {
      const sent = proxyHeaderName(name);
      return sent === undefined ? [] : values.map((value) => [sent, value] as [string, string]);
    }),
    body: Buffer.from(body ?? '', isBase64Encoded && decodeBinary ? 'base64' : 'utf8'),
  };
}

/** A string or boolean that HTTP can carry: no control character but tab (a newline would split the header). */
const isHeaderValue = (value: unknown): boolean =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  typeof value === 'boolean' || (typeof value === 'string' && !/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value));

/** An HTTP token (RFC 9110): a header name with a space or a colon cannot be sent. */
const isHeaderName = (name: string): boolean => /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name);

/**
 * What a REST API does to a Lambda proxy integration's response headers, from the table in AWS,
 * "Amazon API Gateway important notes for REST APIs"
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html#api-gateway-known-issues-rest-apis),
 * column "Response (http/http_proxy/lambda)", its `lambda` entry: `remapped` headers reach the
 * client as `x-amzn-Remapped-<name>` ("Remapped Overwritten" ones, Date and Server, too: the value
 * under the original name is API Gateway's, e.g. its own Date), `dropped` ones not at all. Every
 * other header passes through (Content-Length is always API Gateway's own, see answerHeaders).
 * `WWW-Authenticate` is remapped: a function's 401 challenge reaches clients as
 * `x-amzn-Remapped-WWW-Authenticate`.
 */
export const PROXY_RESPONSE_HEADER_RULES: Readonly<Record<string, 'remapped' | 'dropped'>> = {
  authorization: 'remapped',
  connection: 'remapped',
  'content-md5': 'remapped',
  date: 'remapped',
  expect: 'dropped',
  host: 'dropped',
  'max-forwards': 'remapped',
  'proxy-authenticate': 'dropped',
  server: 'remapped',
  te: 'dropped',
  'transfer-encoding': 'dropped',
  trailer: 'dropped',
  upgrade: 'dropped',
  'user-agent': 'remapped',
  via: 'dropped',
  'www-authenticate': 'remapped',
};

/** The name a proxy response header goes out under, or undefined when API Gateway drops it. */
function proxyHeaderName(name: string): string | undefined {
  const rule = PROXY_RESPONSE_HEADER_RULES[name.toLowerCase()];
  return rule === 'dropped' ? undefined : rule === 'remapped' ? `x-amzn-Remapped-${name}` : name;
}
