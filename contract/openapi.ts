/**
 * The OpenAPI 3.1 document, generated from what the code declares: routes (lib/domain/routes.ts), schemas
 * (lib/domain/schemas.ts), error codes (lib/domain/errors.ts), stages (infra/stages.ts), plus the contract data of
 * contract/operations.ts. `npm run openapi` writes it to openapi.json; a test fails when that file
 * differs from a fresh generation. Never imported by functions/ or lib/ (a test checks the bundles).
 */
import { errorStatuses, type ErrorCode } from '../lib/domain/errors.ts';
import { documentedRoutes as routes, type DocumentedRoute as Route } from '../lib/domain/routeDocs.ts';
import { API_BASE_PATH } from '../lib/domain/routes.ts';
import { INTEGER_TEXT, jsonSchemas } from '../lib/domain/schemas.ts';
import { STAGES } from '../lib/domain/stages.ts';
import {
  ERROR_HEADERS,
  FUNCTION_ANSWER_HEADERS,
  GATEWAY_ERRORS,
  HEADERS,
  OPERATIONS,
  PIPELINE_ERRORS,
  type HeaderName,
  type OptionalHeader,
} from './operations.ts';

/** The interface version of the spec this service implements. */
export const INTERFACE_VERSION = '1.0.0';

type Json = Record<string, unknown>;
const ref = (kind: 'schemas' | 'headers' | 'parameters' | 'responses', name: string): Json => ({
  $ref: `#/components/${kind}/${name}`,
});

/**
 * The one place a schema of lib/domain/schemas.ts becomes the document's JSON Schema (draft 2020-12, what
 * OpenAPI 3.1 uses). They are JSON Schema already; only our `x-` keywords (how the handler trims and
 * words its messages) stay out, and integers get the spec's `int64` format.
 */
function jsonSchemaOf(schema: object): Json {
  const convert = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(convert);
    if (typeof value !== 'object' || value === null) return value;
    const entries = Object.entries(value).filter(([key]) => !key.startsWith('x-'));
    const converted = Object.fromEntries(entries.map(([key, inner]) => [key, convert(inner)]));
    return converted.type === 'integer' ? { ...converted, format: 'int64' } : converted;
  };
  return convert(schema) as Json;
}

function componentSchemas(): Json {
  const withStatusRef = (schema: object) => {
    const converted = jsonSchemaOf(schema) as { properties: Record<string, Json>; required: string[] };
    converted.properties.status = ref('schemas', 'PetStatus');
    return converted;
  };
  const newPet = withStatusRef(jsonSchemas.NewPet);
  const pet = withStatusRef(jsonSchemas.Pet);
  const codes = Object.keys(errorStatuses);
  return {
    PetStatus: jsonSchemaOf(jsonSchemas.PetStatus),
    NewPet: { ...newPet, description: 'A pet to add. Unknown fields, `id` included, are refused.' },
    Pet: { ...pet, description: 'A pet as stored. Without `status` when it was created without one.' },
    Error: {
      type: 'object',
      description: 'Every error answer. `status` repeats the HTTP status.',
      properties: {
        code: { type: 'string', enum: codes },
        message: { type: 'string', description: 'For people; never a stack trace.' },
        status: { type: 'integer', minimum: 400, maximum: 599 },
        requestId: { type: 'string', description: 'On 5xx answers: the request id to quote (as in `X-Request-Id`).' },
      },
      required: ['code', 'message', 'status'],
      additionalProperties: false,
    },
    GatewayMessage: {
      type: 'object',
      description:
        "API Gateway's own body, on the one answer it does not let an API shape: 413 for a request over its 10 MB or " +
        'Lambda\'s 6 MB invoke payload ("Customizing the default gateway response for 413 REQUEST_TOO_LARGE isn\'t currently supported").',
      properties: { message: { type: 'string', examples: ['Request Too Long'] } },
      required: ['message'],
      additionalProperties: false,
    },
  };
}

const INTEGER_TEXT_DESCRIPTION =
  'Written as JSON writes an integer (`x-text-pattern`): an optional minus and decimal digits, no plus, leading zero, fraction, exponent or space; anything else is 400.';

/** A parameter whose schema lib/domain/schemas.ts declares; an integer one also says how it is written. */
function declaredParameter(name: string, location: 'query' | 'path', description: string, declared: object): Json {
  const schema = jsonSchemaOf(declared);
  const integer = schema.type === 'integer';
  return {
    name,
    in: location,
    ...(location === 'path' ? { required: true } : {}),
    description: integer ? `${description} ${INTEGER_TEXT_DESCRIPTION}` : description,
    ...(integer ? { 'x-text-pattern': INTEGER_TEXT } : {}),
    schema,
  };
}

function componentParameters(): Json {
  const query = jsonSchemas.ListPetsQuery.properties;
  return {
    limit: declaredParameter('limit', 'query', 'Pets per page.', query.limit),
    status: {
      name: 'status',
      in: 'query',
      description: 'Only pets of this status.',
      schema: ref('schemas', 'PetStatus'),
    },
    cursor: declaredParameter(
      'cursor',
      'query',
      'Where the page starts: opaque, taken from a `Link: rel="next"` as it is, for the same `status`. Only the spelling the ' +
        'service gave is taken (canonical base64url); one it did not give, or gave for another `status`, is 400.',
      query.cursor,
    ),
    petId: declaredParameter(
      'petId',
      'path',
      "The pet's id: any int64. One that names no pet (`0`, `-1`, `9223372036854775807`) is 404, as for any unknown id.",
      jsonSchemas.PetIdPath.properties.petId,
    ),
    idempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      description:
        'Makes the create safe to retry: the same key with the same body, within 24 hours, answers the pet the first ' +
        'request created (201, `Idempotent-Replayed: true`); with another body, 422; once an operator has removed that pet, 410. Scoped to the API key. ' +
        'Send one whenever the client may retry (after a 503 or 504, or a lost connection).',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
    },
  };
}

/**
 * The response headers of the document, as components. OpenAPI 3.1 ignores every sibling of a `$ref`
 * but `summary` and `description`, so `{"$ref": …, "required": true}` would state nothing: a header
 * present only sometimes gets its own component, `<Name>.optional`, and `<Name>` is the required one.
 * Only the variants some response uses are emitted (an unused component is a linter warning).
 */
class HeaderComponents {
  private readonly used = new Map<string, OptionalHeader>();

  /** The references of a response's headers, or undefined when it has none. */
  refs(headers: readonly OptionalHeader[]): Json | undefined {
    if (headers.length === 0) return undefined;
    return Object.fromEntries(
      dedupe(headers).map((header) => {
        const name = componentName(header);
        this.used.set(name, header);
        return [header.name, ref('headers', name)];
      }),
    );
  }

  components(): Json {
    const order = Object.keys(HEADERS);
    const entries = [...this.used].sort(
      ([, a], [, b]) => order.indexOf(a.name) - order.indexOf(b.name) || Number(b.required) - Number(a.required),
    );
    return Object.fromEntries(entries.map(([name, header]) => [name, headerObject(header)]));
  }
}

const componentName = ({ name, required }: OptionalHeader): string => (required ? name : `${name}.optional`);

/** A Header Object: the description and example of HEADERS, `required` where it always comes. */
function headerObject({ name, required }: OptionalHeader): Json {
  const { description, example } = HEADERS[name];
  return {
    description,
    ...(required ? { required: true } : {}),
    schema: { type: 'string', ...(example ? { examples: [example] } : {}) },
  };
}

/** Error responses of an operation, one per status, each narrowing the Error schema to its codes. */
function errorResponses(route: Route, headerComponents: HeaderComponents): Record<string, Json> {
  const contract = OPERATIONS[route.operation];
  const own = [...contract.errors, ...PIPELINE_ERRORS];
  const codes = [...new Set([...own, ...GATEWAY_ERRORS])];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(errorStatuses[code], [...(byStatus.get(errorStatuses[code]) ?? []), code]);
  const responses: Record<string, Json> = {};
  for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
    // The function's own headers come only when the function answered, so they are required only on a
    // status API Gateway never answers by itself.
    const fromFunction = statusCodes.some((code) => own.includes(code));
    const fromGateway = statusCodes.some((code) => GATEWAY_ERRORS.includes(code));
    const headers: OptionalHeader[] = [
      ...statusCodes.flatMap((code) => ERROR_HEADERS[code] ?? []),
      ...[...FUNCTION_ANSWER_HEADERS, ...(contract.everyAnswerHeaders ?? [])].map((name) => ({
        name,
        required: fromFunction && !fromGateway,
      })),
    ];
    const headerRefs = headerComponents.refs(headers);
    const answeredBy = !fromGateway
      ? ''
      : fromFunction
        ? ' (also answered by API Gateway)'
        : ' (answered by API Gateway)';
    responses[String(status)] = {
      description: statusCodes.map((code) => `\`${code}\``).join(', ') + answeredBy,
      ...(headerRefs ? { headers: headerRefs } : {}),
      content: { 'application/json': { schema: withGatewayMessage(errorSchema(statusCodes, status), status) } },
    };
  }
  return responses;
}

/** Statuses whose answer may be API Gateway's own `{message}` rather than the Error body. */
const GATEWAY_MESSAGE_STATUSES: ReadonlySet<number> = new Set([errorStatuses.PAYLOAD_TOO_LARGE]);

const withGatewayMessage = (schema: Json, status: number): Json =>
  GATEWAY_MESSAGE_STATUSES.has(status) ? { oneOf: [schema, ref('schemas', 'GatewayMessage')] } : schema;

const errorSchema = (codes: readonly ErrorCode[], status: number): Json => ({
  allOf: [
    ref('schemas', 'Error'),
    { properties: { code: codes.length === 1 ? { const: codes[0] } : { enum: codes }, status: { const: status } } },
  ],
});

function dedupe(headers: readonly OptionalHeader[]): OptionalHeader[] {
  const seen = new Map<HeaderName, OptionalHeader>();
  for (const header of headers) if (!seen.get(header.name)?.required) seen.set(header.name, header);
  return [...seen.values()];
}

function operation(route: Route, headerComponents: HeaderComponents): Json {
  const contract = OPERATIONS[route.operation];
  const success = contract.success;
  const successHeaders = [
    ...(success.headers ?? []),
    ...[...FUNCTION_ANSWER_HEADERS, ...(contract.everyAnswerHeaders ?? [])].map((name) => ({ name, required: true })),
  ];
  const body = route.operation === 'listPets' ? { type: 'array', items: ref('schemas', 'Pet') } : ref('schemas', 'Pet');
  const deprecation = route.deprecated;
  const successHeaderRefs = headerComponents.refs(successHeaders);
  return {
    operationId: route.operation,
    summary: route.summary,
    description: deprecation
      ? `${contract.description}\n\nDeprecated since ${deprecation.since}; from its sunset, ${deprecation.sunset}, ` +
        `it answers 410 \`GONE\`. Successor: \`GET ${API_BASE_PATH}${deprecation.successor}\`.`
      : contract.description,
    tags: ['pets'],
    ...(deprecation
      ? {
          deprecated: true,
          'x-sunset': deprecation.sunset,
          'x-successor': `GET ${API_BASE_PATH}${deprecation.successor}`,
        }
      : {}),
    security: [{ bearer: [] }],
    ...(parametersOf(route).length ? { parameters: parametersOf(route) } : {}),
    ...(route.method === 'POST'
      ? { requestBody: { required: true, content: { 'application/json': { schema: ref('schemas', 'NewPet') } } } }
      : {}),
    responses: {
      [String(success.status)]: {
        description: success.description,
        ...(successHeaderRefs ? { headers: successHeaderRefs } : {}),
        content: { 'application/json': { schema: body } },
      },
      ...errorResponses(route, headerComponents),
    },
  };
}

function parametersOf(route: Route): Json[] {
  const inPath = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => ref('parameters', match[1] as string));
  const others = (OPERATIONS[route.operation].parameters ?? []).map((name) => ref('parameters', name));
  return [...inPath, ...others];
}

function servers(): Json[] {
  return [...STAGES].reverse().map((stage) => ({
    url: `https://{apiId}.execute-api.{region}.amazonaws.com${API_BASE_PATH}`,
    description: `${stage} (the ApiUrl output of PetStore-${stage})`,
    variables: {
      apiId: { default: 'your-api-id', description: `The REST API id of PetStore-${stage}.` },
      region: {
        default: 'us-east-1',
        description:
          'The AWS region it is deployed in (the CDK CLI\'s default; docs/deploying.md "Region and account").',
      },
    },
  }));
}

/**
 * What a request that matches no operation is answered, by status (the local API and API Gateway's
 * mocks, before authentication). OpenAPI has no place for these, so they live in an extension of the
 * document, which the tests read; headers inline, as nothing else uses `Allow`.
 */
function unroutedResponses(): Json {
  const inline = (header: OptionalHeader) => headerObject(header);
  return {
    '404': {
      description: '`NOT_FOUND`: no resource at this path.',
      headers: { 'X-Request-Id': inline({ name: 'X-Request-Id', required: false }) },
      content: { 'application/json': { schema: errorSchema(['NOT_FOUND'], errorStatuses.NOT_FOUND) } },
    },
    '405': {
      description: '`METHOD_NOT_ALLOWED`: the path exists, the method does not.',
      headers: {
        Allow: inline({ name: 'Allow', required: true }),
        'X-Request-Id': inline({ name: 'X-Request-Id', required: false }),
      },
      content: {
        'application/json': { schema: errorSchema(['METHOD_NOT_ALLOWED'], errorStatuses.METHOD_NOT_ALLOWED) },
      },
    },
    ...edgeResponses(),
  };
}

/**
 * The local servers' answers to a request that is no HTTP they serve, before any route is looked
 * up (tools/local-kit/src/httpEdges.ts; docs/api.md, "Requests Node refuses"). API Gateway's edge answers these itself, in
 * shapes it does not document.
 */
const EDGE_ERRORS: readonly { code: ErrorCode; description: string }[] = [
  {
    code: 'VALIDATION_FAILED',
    description:
      'not valid HTTP/1.1 (a malformed chunk, `Content-Length` with `Transfer-Encoding` or negative, obsolete header folding, a control character in a header, HTTP/1.1 without `Host`), or a target that names no path',
  },
  { code: 'REQUEST_TIMEOUT', description: 'the request line and headers did not all arrive in time' },
  { code: 'EXPECTATION_FAILED', description: 'an `Expect` other than `100-continue`' },
  { code: 'HEADERS_TOO_LARGE', description: "the request line and headers are over the server's limit" },
  { code: 'NOT_IMPLEMENTED', description: 'a method HTTP does not know (e.g. `BREW`)' },
];

function edgeResponses(): Json {
  const requestId = headerObject({ name: 'X-Request-Id', required: false });
  return Object.fromEntries(
    EDGE_ERRORS.map(({ code, description }) => [
      String(errorStatuses[code]),
      {
        description: `\`${code}\`: ${description}. The connection closes after it.`,
        headers: { 'X-Request-Id': requestId },
        content: { 'application/json': { schema: errorSchema([code], errorStatuses[code]) } },
      },
    ]),
  );
}

/** Where the document keeps unroutedResponses(). */
export const UNROUTED_RESPONSES = 'x-unrouted-responses';

export function openApiDocument(): Json {
  const headerComponents = new HeaderComponents();
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation(route, headerComponents) };
  }
  return {
    openapi: '3.1.1',
    info: {
      title: 'Pet Store Inventory',
      version: INTERFACE_VERSION,
      description:
        "The inventory of a pet store's animals. Every request needs `Authorization: Bearer <API_KEY>`; every answer " +
        'is `application/json`, errors in the `Error` shape. A path that does not exist answers 404 `NOT_FOUND`; a ' +
        `known path with another method answers 405 \`METHOD_NOT_ALLOWED\` with \`Allow\` (see \`${UNROUTED_RESPONSES}\`).`,
    },
    servers: servers(),
    security: [{ bearer: [] }],
    tags: [{ name: 'pets', description: 'The animals of the store.' }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An API key issued with `npm run keys`.' },
      },
      schemas: componentSchemas(),
      parameters: componentParameters(),
      headers: headerComponents.components(),
    },
    [UNROUTED_RESPONSES]: unroutedResponses(),
  };
}

/**
 * The document as it is written to openapi.json: ASCII, each other character a JSON `\u` escape, so
 * that the whitespace the name's pattern spells as itself (lib/domain/schemas.ts) can be read.
 */
export const openApiText = (): string =>
  `${JSON.stringify(openApiDocument(), null, 2).replace(/[^\n -~]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)}\n`;
