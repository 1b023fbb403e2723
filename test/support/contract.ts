/**
 * Every response a test receives is checked against openapi.json here, once for all tests: its
 * status must be declared for the operation, its declared required headers present, its body of the
 * declared schema. A response the document does not describe fails the test that received it.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { readFileSync } from 'node:fs';
import { OPENAPI_FILE } from '../../contract/files.ts';
import { UNROUTED_RESPONSES } from '../../contract/openapi.ts';
import { CHALLENGE_HEADERS } from '../../contract/operations.ts';
import { API_BASE_PATH, matchRoute } from '../../lib/domain/routes.ts';
import { routingPath } from '@petstore/local-kit/requestTarget';

interface HeaderObject {
  required?: boolean;
}
interface ResponseObject {
  /** Inline Header Objects or references to components/headers (which say themselves whether they are required). */
  headers?: Record<string, HeaderObject | { $ref: string }>;
  content?: Record<string, unknown>;
}
type Operation = { responses: Record<string, ResponseObject> };

const document = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
  components: { headers: Record<string, HeaderObject> };
  [UNROUTED_RESPONSES]: Record<string, ResponseObject>;
};

/** A response's header as the document means it: a reference is the component it names (its siblings count for nothing). */
export function headerOf(header: HeaderObject | { $ref: string }): HeaderObject {
  if (!('$ref' in header)) return header;
  const name = /^#\/components\/headers\/(.+)$/.exec(header.$ref)?.[1];
  const component = name === undefined ? undefined : document.components.headers[name];
  if (!component) throw new Error(`openapi.json refers to a header it does not define: ${header.$ref}`);
  return component;
}

const DOCUMENT_ID = 'https://petstore.local/openapi.json';
// strict: false because an OpenAPI document is more than a schema (paths, components...).
const ajv = new Ajv2020({ strict: false, allErrors: true, formats: { int64: true } });
ajv.addSchema(document, DOCUMENT_ID);
const validators = new Map<string, ValidateFunction>();

const pointer = (...segments: string[]): string =>
  segments.map((segment) => `/${segment.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

function validatorAt(jsonPointer: string): ValidateFunction {
  let validate = validators.get(jsonPointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${jsonPointer}` });
    validators.set(jsonPointer, validate);
  }
  return validate;
}

export interface ReceivedResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: unknown;
}

/**
 * Checks `response` to `method` on `resourcePath` (a path template of the document, e.g. `/pets/{petId}`),
 * or, with no resource path, against the document's answers to requests no operation matches.
 */
export function assertDocumented(method: string, resourcePath: string | undefined, response: ReceivedResponse): void {
  const where = `${method} ${resourcePath ?? '(no route)'} -> ${response.status}`;
  const operation = resourcePath ? document.paths[resourcePath]?.[method.toLowerCase()] : undefined;
  let declared: ResponseObject | undefined;
  let base: string;
  if (operation && resourcePath) {
    declared = operation.responses[String(response.status)];
    base = pointer('paths', resourcePath, method.toLowerCase(), 'responses', String(response.status));
  } else {
    declared = document[UNROUTED_RESPONSES][String(response.status)];
    base = pointer(UNROUTED_RESPONSES, String(response.status));
  }
  if (!declared)
    throw new Error(`openapi.json declares no ${response.status} for ${where}: ${JSON.stringify(response.body)}`);
  for (const [name, header] of Object.entries(declared.headers ?? {})) {
    if (headerOf(header).required && response.headers[name.toLowerCase()] === undefined) {
      throw new Error(`${where}: the required header ${name} is missing`);
    }
  }
  if (
    response.status === 401 &&
    !CHALLENGE_HEADERS.some((name) => response.headers[name.toLowerCase()] !== undefined)
  ) {
    throw new Error(`${where}: the challenge is missing (${CHALLENGE_HEADERS.join(' or ')})`);
  }
  if (response.headers['content-type'] !== 'application/json') throw new Error(`${where}: not application/json`);
  const validate = validatorAt(`${base}${pointer('content', 'application/json', 'schema')}`);
  if (!validate(response.body)) {
    throw new Error(
      `${where}: the body does not match openapi.json: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(response.body)}`,
    );
  }
}

/** The document's path template for a request path under the base path, as the API routes it. */
export function resourcePathOf(method: string, pathname: string): string | undefined {
  const routed = routingPath(pathname);
  if (!routed.startsWith(`${API_BASE_PATH}/`)) return undefined;
  const match = matchRoute(method, routed.slice(API_BASE_PATH.length));
  return match.kind === 'found' ? match.route.path : undefined;
}
