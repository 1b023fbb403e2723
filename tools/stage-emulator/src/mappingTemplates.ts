/**
 * What mapping templates and mapping expressions read, as API Gateway gives it: the `$context`
 * variables of a request, its `$input` (body and method request parameters), `$stageVariables`,
 * a `method.request.*` / `context.*` / `'literal'` mapping expression's value, and the template a
 * request's Accept selects. The templates themselves are rendered by ./velocity.ts.
 */
import { groupPairs, lastValues, localIdentity, pairs } from '@petstore/local-kit/proxyEvent';
import { mediaType, requestHeader, requestHeaders, type Answer, type Exchange, type RestApi } from './restApiModel.ts';
import { renderTemplate, valueAt, type TemplateInput, type TemplateVariables } from './velocity.ts';

/** A request's `$context` (the proxy event's and the authorizer event's requestContext too). */
export function contextVariables(exchange: Exchange, api: RestApi): Record<string, unknown> {
  const method = exchange.apiMethod;
  return {
    accountId: api.env.accountId,
    apiId: api.apiId,
    domainName: exchange.domainName,
    domainPrefix: exchange.domainName.split('.')[0]?.split(':')[0] ?? '',
    extendedRequestId: exchange.extendedRequestId,
    httpMethod: exchange.method,
    identity: localIdentity(exchange.sourceIp, requestHeader(exchange, 'user-agent') ?? null),
    path: exchange.fullPath,
    protocol: 'HTTP/1.1',
    requestId: exchange.requestId,
    requestTime: clfTime(exchange.received),
    requestTimeEpoch: exchange.received.getTime(),
    resourceId: method?.resource.id ?? '',
    resourcePath: method?.resource.path ?? '',
    stage: api.stageName,
  };
}

function requestInput(exchange: Exchange): TemplateInput {
  const headers = lastValues(groupPairs(pairs(exchange.rawHeaders))) ?? {};
  return {
    body: exchange.body.toString('utf8'),
    params: {
      path: exchange.pathParameters,
      querystring: lastValues(groupPairs([...exchange.query.entries()])) ?? {},
      header: headers,
    },
  };
}

export function templateVariables(
  exchange: Exchange,
  api: RestApi,
  context = contextVariables(exchange, api),
): TemplateVariables {
  return { context, input: requestInput(exchange), stageVariables: api.stageVariables };
}

/** An integration or gateway response's header mappings and response templates, as they shape an answer. */
export interface MappedResponse {
  responseParameters: Record<string, string>;
  responseTemplates: Record<string, string>;
}

/**
 * The answer a response makes: the template for the request's Accept (its type the Content-Type),
 * `fixedHeaders` next, then each `<headerPrefix>.X` mapping's value as header X, and the rendered
 * body. The mappings read `variables.context`, before the body's template runs (a template's
 * `#set($context.…)` writes into that object).
 */
export function mappedAnswer(
  status: number,
  response: MappedResponse,
  headerPrefix: 'method.response.header' | 'gatewayresponse.header',
  exchange: Exchange,
  api: RestApi,
  variables: TemplateVariables,
  fixedHeaders: [string, string][] = [],
): Answer {
  const selected = selectTemplate(response.responseTemplates, requestHeader(exchange, 'accept'));
  const headers = new Map<string, [string, string]>([
    ['content-type', ['Content-Type', selected?.mediaType ?? 'application/json']],
  ]);
  for (const [name, value] of fixedHeaders) headers.set(name.toLowerCase(), [name, value]);
  const mapping = new RegExp(`^${headerPrefix.replaceAll('.', '\\.')}\\.(.+)$`);
  for (const [target, source] of Object.entries(response.responseParameters)) {
    const name = mapping.exec(target)?.[1];
    const value = name && mappingValue(source, exchange, api, variables.context);
    if (name && value !== undefined) headers.set(name.toLowerCase(), [name, value]);
  }
  return {
    status,
    headers: [...headers.values()],
    body: Buffer.from(selected ? renderTemplate(selected.template, variables) : '', 'utf8'),
  };
}

/**
 * A mapping expression's value: a `'literal'`, a method request parameter, a context or stage
 * variable. Undefined when it names nothing (the header is then left out, as API Gateway does).
 */
function mappingValue(
  source: string,
  exchange: Exchange,
  api: RestApi,
  context: Record<string, unknown>,
): string | undefined {
  const literal = /^'(.*)'$/s.exec(source);
  if (literal) return literal[1];
  const [, location, name = ''] =
    /^method\.request\.(header|multivalueheader|querystring|multivaluequerystring|path)\.(.+)$/.exec(source) ?? [];
  if (location === 'path') return exchange.pathParameters[name];
  if (location === 'querystring') return exchange.query.getAll(name).at(-1);
  if (location === 'multivaluequerystring')
    return exchange.query.has(name) ? exchange.query.getAll(name).join(',') : undefined;
  if (location === 'header') return requestHeader(exchange, name);
  if (location === 'multivalueheader') return requestHeaders(exchange, name).join(',') || undefined;
  const variable = /^(context|stageVariables)\.(.+)$/.exec(source);
  if (variable) {
    const root = variable[1] === 'context' ? context : (api.stageVariables ?? {});
    const value = valueAt(root, `$.${variable[2]}`);
    return value === undefined || value === null ? undefined : String(value);
  }
  return undefined;
}

/** The template for the request's Accept type, else application/json, else the first. */
function selectTemplate(
  templates: Record<string, string>,
  accept: string | undefined,
): { mediaType: string; template: string } | undefined {
  const entries = Object.entries(templates);
  const accepted = (accept ?? '')
    .split(',')
    .map((part) => mediaType(part))
    .filter((type): type is string => Boolean(type));
  const found =
    entries.find(([type]) => accepted.includes(type.toLowerCase())) ??
    entries.find(([type]) => type.toLowerCase() === 'application/json') ??
    entries[0];
  return found && { mediaType: found[0], template: found[1] };
}

/** `09/Apr/2015:12:34:56 +0000`, as `$context.requestTime` has it. */
function clfTime(date: Date): string {
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(date.getUTCDate())}/${months[date.getUTCMonth()]}/${date.getUTCFullYear()}:${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())} +0000`;
}
