/**
 * The spec's resources and parameters, each declared once as JSON Schema data (`jsonSchemas`):
 * handlers validate with them through the small interpreter below, TypeScript takes its types from
 * them (`Infer`), and the OpenAPI document can embed them as they are. An interpreter of the few
 * keywords we use costs about 2 KB of bundle where zod/mini cost 22 KB (docs/performance.md, Speed and size).
 *
 * Keywords: `type` (object, string, integer), `enum`, `minLength`/`maxLength` (in characters, that is
 * code points, as JSON Schema counts), `pattern` (an ECMA-262 regex run with the `u` flag, as ajv runs
 * it), `minimum`/`maximum`, `default`, `properties`, `required`, `additionalProperties: false`; and one
 * extension, `x-patternMessage` (what a failed `pattern` tells the client). Strings are judged and
 * stored exactly as sent, never trimmed, so a client validating with openapi.json agrees with the
 * service on every value (test/contract/schemaDifferential.test.ts).
 * Path and query parameters arrive as text: an `integer` one must be written as `INTEGER_TEXT` says.
 */
import { ApiError } from './errors.ts';

export const PET_STATUSES = ['available', 'pending', 'sold'] as const;
const NAME_MAX_CHARACTERS = 256;
const LIMIT = { min: 1, max: 100, default: 20 } as const;
/** The largest int64 that survives a JSON round trip in every client (2^53 - 1). */
const MAX_ID = Number.MAX_SAFE_INTEGER;

const PetStatusSchema = { type: 'string', enum: PET_STATUSES } as const;

/**
 * A name is stored as sent, so it must not start or end with whitespace (ECMA-262's `\s`: spaces,
 * NBSP, U+FEFF, line separators...) nor contain a control character anywhere; nor a lone surrogate
 * (valid in a JSON escape), which cannot be stored as UTF-8 and would come back as U+FFFD; nor
 * U+FFFD itself, the mark of bytes lost on the way: API Gateway hands the function a body that is
 * not UTF-8 as text with U+FFFD in place of each bad sequence (the API declares no binary media
 * types; docs "Content type conversions in API Gateway"), so refusing U+FFFD is what keeps a
 * corrupted name out of the store on AWS, and the local API decodes bodies the same way.
 *
 * Those code points are spelled as ranges: the controls (General_Category Cc, U+0000-U+001F and
 * U+007F-U+009F, a set Unicode's stability policy keeps unchanged), the surrogates (Cs,
 * U+D800-U+DFFF) and U+FFFD. That is the set `[\p{Cc}\p{Cs}\uFFFD]`, which
 * test/lib/domain/schemas.test.ts checks over every code point; but V8 compiles a class of property
 * escapes in about 0.8 ms against 0.07 ms for ranges, on every createPet cold start, and validators
 * without property escapes (Python's `re`) read ranges.
 */
const NOT_IN_A_NAME = '\\u0000-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF\\uFFFD';
const NAME_CHARACTER = `[^${NOT_IN_A_NAME}]`;
const NAME_EDGE = `[^\\s${NOT_IN_A_NAME}]`;

const PetNameSchema = {
  type: 'string',
  minLength: 1,
  maxLength: NAME_MAX_CHARACTERS,
  pattern: `^${NAME_EDGE}(${NAME_CHARACTER}*${NAME_EDGE})?$`,
  'x-patternMessage':
    'must not start or end with whitespace, nor contain control characters, lone surrogates or U+FFFD (bytes that were not UTF-8)',
} as const;

/**
 * How an integer parameter is written: decimal digits without sign or leading zero, as JSON writes
 * an integer (`7`, never `07`, `+7`, `7.0`, `7e0` or ` 7`). openapi.json publishes it as the
 * parameters' `x-text-pattern`.
 */
export const INTEGER_TEXT = '^(0|[1-9][0-9]*)$';

/**
 * A cursor is two parts of canonical base64url (RFC 4648 section 5, unpadded, the unused bits of a
 * last character zero), joined by a dot: the spelling the service gives, and the only one it takes.
 */
const BASE64URL = '[A-Za-z0-9_-]';
const BASE64URL_PART = `(${BASE64URL}{4})*(${BASE64URL}{4}|${BASE64URL}{2}[AEIMQUYcgkosw048]|${BASE64URL}[AQgw])`;

const CursorSchema = {
  type: 'string',
  minLength: 1,
  pattern: `^${BASE64URL_PART}\\.${BASE64URL_PART}$`,
  'x-patternMessage': 'is not a cursor this service gave for this query',
} as const;

const IdSchema = { type: 'integer', minimum: 1, maximum: MAX_ID } as const;

const NewPetSchema = {
  type: 'object',
  properties: { name: PetNameSchema, categoryId: IdSchema, status: PetStatusSchema },
  required: ['name', 'categoryId'],
  additionalProperties: false,
} as const;

const PetSchema = {
  type: 'object',
  properties: { id: IdSchema, ...NewPetSchema.properties },
  required: ['id', 'name', 'categoryId'],
  additionalProperties: false,
} as const;

const ListPetsQuerySchema = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: LIMIT.min, maximum: LIMIT.max, default: LIMIT.default },
    status: PetStatusSchema,
    cursor: CursorSchema,
  },
  required: [],
} as const;

const PetIdPathSchema = { type: 'object', properties: { petId: IdSchema }, required: ['petId'] } as const;

/** Every schema, by name: the one declaration the handlers, the types and OpenAPI read. */
export const jsonSchemas = {
  PetStatus: PetStatusSchema,
  NewPet: NewPetSchema,
  Pet: PetSchema,
  ListPetsQuery: ListPetsQuerySchema,
  PetIdPath: PetIdPathSchema,
} as const;

export const { NewPet, ListPetsQuery, PetIdPath } = jsonSchemas;

// --- Types from the schemas -------------------------------------------------------------------

type Simplify<T> = { [K in keyof T]: T[K] };
type InferValue<S> = S extends { enum: readonly (infer E)[] }
  ? E
  : S extends { type: 'integer' }
    ? number
    : S extends { type: 'string' }
      ? string
      : never;
/** Required in the output: listed in `required`, or filled in from a `default`. */
type PresentKeys<P, R extends string> = {
  [K in keyof P]: K extends R ? K : P[K] extends { default: unknown } ? K : never;
}[keyof P];
export type Infer<S> = S extends { properties: infer P; required: readonly (infer R extends string)[] }
  ? Simplify<
      { [K in PresentKeys<P, R>]: InferValue<P[K]> } & { [K in Exclude<keyof P, PresentKeys<P, R>>]?: InferValue<P[K]> }
    >
  : InferValue<S>;

export type PetStatus = Infer<typeof PetStatusSchema>;
export type NewPet = Infer<typeof NewPetSchema>;
export type Pet = Infer<typeof PetSchema>;
export type ListPetsQuery = Infer<typeof ListPetsQuerySchema>;

// --- The interpreter --------------------------------------------------------------------------

interface ValueSchema {
  readonly type: 'string' | 'integer';
  readonly enum?: readonly string[];
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly 'x-patternMessage'?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly default?: unknown;
}

interface ObjectSchema {
  readonly type: 'object';
  readonly properties: Readonly<Record<string, ValueSchema>>;
  readonly required: readonly string[];
  readonly additionalProperties?: boolean;
}

type Where = 'body' | 'query' | 'path';
type Checked = { ok: true; value: unknown } | { ok: false; problem: string };

const patterns = new Map<string, RegExp>();
const compiled = (pattern: string): RegExp => {
  let regex = patterns.get(pattern);
  if (!regex) {
    regex = new RegExp(pattern, 'u');
    patterns.set(pattern, regex);
  }
  return regex;
};

const integerText = new RegExp(INTEGER_TEXT);

function checkValue(schema: ValueSchema, given: unknown, fromString: boolean): Checked {
  const fail = (problem: string): Checked => ({ ok: false, problem });
  if (schema.enum)
    return schema.enum.includes(given as string)
      ? { ok: true, value: given }
      : fail(`must be one of ${schema.enum.join(', ')}`);
  if (schema.type === 'integer') {
    const value = fromString && typeof given === 'string' && integerText.test(given) ? Number(given) : given;
    const { minimum = Number.MIN_SAFE_INTEGER, maximum = Number.MAX_SAFE_INTEGER } = schema;
    const inRange = typeof value === 'number' && Number.isInteger(value) && value >= minimum && value <= maximum;
    return inRange ? { ok: true, value } : fail(`must be an integer from ${minimum} to ${maximum}`);
  }
  if (typeof given !== 'string') return fail('must be a string');
  const characters = schema.minLength !== undefined || schema.maxLength !== undefined ? [...given].length : 0;
  if (schema.minLength !== undefined && characters < schema.minLength) {
    return fail(schema.minLength === 1 ? 'must not be empty' : `must be at least ${schema.minLength} characters`);
  }
  if (schema.maxLength !== undefined && characters > schema.maxLength)
    return fail(`must be at most ${schema.maxLength} characters`);
  if (schema.pattern !== undefined && !compiled(schema.pattern).test(given)) {
    return fail(schema['x-patternMessage'] ?? `must match ${schema.pattern}`);
  }
  return { ok: true, value: given };
}

/**
 * Validates `input` against `schema`; on failure throws a 400 whose message names each
 * offending field, so a client can fix its request without guessing.
 */
export function parseOrThrow<S extends ObjectSchema>(schema: S, input: unknown, where: Where): Infer<S> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ApiError('VALIDATION_FAILED', `Invalid ${where}: the ${where} must be a JSON object.`);
  }
  const given = input as Record<string, unknown>;
  const output: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, property] of Object.entries(schema.properties)) {
    const value = Object.hasOwn(given, key) ? given[key] : undefined;
    if (value === undefined) {
      if (property.default !== undefined) output[key] = property.default;
      else if (schema.required.includes(key)) problems.push(`'${key}' is required`);
      continue;
    }
    const checked = checkValue(property, value, where !== 'body');
    if (checked.ok) output[key] = checked.value;
    else problems.push(`'${key}' ${checked.problem}`);
  }
  if (schema.additionalProperties === false) {
    const unknown = Object.keys(given).filter((key) => !Object.hasOwn(schema.properties, key));
    if (unknown.length > 0) problems.push(`unknown field ${unknown.map((key) => `'${key}'`).join(', ')}`);
  }
  if (problems.length > 0) throw new ApiError('VALIDATION_FAILED', `Invalid ${where}: ${problems.join('; ')}.`);
  return output as Infer<S>;
}
