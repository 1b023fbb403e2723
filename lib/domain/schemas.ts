/**
 * The spec's resources and parameters, each declared once as JSON Schema data (`jsonSchemas`):
 * handlers validate with them through the small interpreter below, TypeScript takes its types from
 * them (`Infer`), and the OpenAPI document can embed them as they are. An interpreter of the few
 * keywords we use costs about 2.5 kB of bundle where zod/mini cost 22 KB (docs/performance.md, Speed and size).
 *
 * Keywords: `type` (object, string, integer), `enum`, `minLength`/`maxLength` (in characters, that is
 * code points, as JSON Schema counts), `pattern` (an ECMA-262 regex run with the `u` flag, as ajv runs
 * it; a string with a lone surrogate fails it too), `minimum`/`maximum`, `format: int64` (a parameter
 * read exactly, as a bigint, over the signed 64-bit range), `default`, `properties`, `required`,
 * `additionalProperties: false`; and one extension, `x-patternMessage` (what a failed `pattern` tells
 * the client). `description` is for the document. Strings are judged and
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

/** An inclusive range of code points. */
type CodePoints = readonly [first: number, last: number];

/** The inside of a character class for `ranges`, sorted and merged, spelled as every engine reads it. */
function classRanges(ranges: readonly CodePoints[]): string {
  const merged: [number, number][] = [];
  for (const [first, last] of [...ranges].sort(([a], [b]) => a - b)) {
    const previous = merged.at(-1);
    if (previous && first <= previous[1] + 1) previous[1] = Math.max(previous[1], last);
    else merged.push([first, last]);
  }
  const spelled = (codePoint: number) =>
    codePoint <= 0xff ? `\\x${codePoint.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCodePoint(codePoint);
  return merged
    .map(([first, last]) => (first === last ? spelled(first) : `${spelled(first)}-${spelled(last)}`))
    .join('');
}

/**
 * A name is stored as sent, so it must not start or end with whitespace (ECMA-262's `\s`: spaces,
 * NBSP, U+FEFF, line separators...) nor contain a control character anywhere; nor U+FFFD, the mark
 * of bytes lost on the way: API Gateway hands the function a body that is not UTF-8 as text with
 * U+FFFD in place of each bad sequence (the API declares no binary media types; docs "Content type
 * conversions in API Gateway"), so refusing U+FFFD is what keeps a corrupted name out of the store on
 * AWS, and the local API decodes bodies the same way.
 *
 * The pattern must mean the same in every engine a client may validate or generate with: ECMA-262
 * (ajv), Python's `re`, Rust's `regex`, Go's and RE2's. So it names each code point: `\s` differs
 * between them (U+FEFF is whitespace only to ECMA-262), `\uXXXX` is unknown to Go and RE2, and
 * `\p{…}` to Python. Code points up to U+00FF are written `\xHH`, the rest as themselves
 * (test/contract/regexEngines.test.ts compiles every pattern of openapi.json with RE2 as well).
 * The controls (General_Category Cc: U+0000-U+001F, U+007F-U+009F, a set Unicode's stability
 * policy keeps unchanged) and U+FFFD are refused anywhere; at the edges, also ECMA-262's whitespace
 * (`WhiteSpace` and `LineTerminator`: the Zs of Unicode, stable since 6.3, and U+FEFF).
 *
 * A lone surrogate (a `\uD800`-`\uDFFF` JSON escape that is not half of a pair) cannot be stored
 * as UTF-8 and would come back as U+FFFD, so it is refused too (RFC 7493, I-JSON, forbids it in any
 * string); but a pattern cannot say so outside ECMA-262 (Rust's and Python's engines refuse the range
 * or cannot hold such a string), so `checkValue` refuses it in code and the name's description says it.
 */
const CONTROLS: readonly CodePoints[] = [
  [0x00, 0x1f],
  [0x7f, 0x9f],
];
const REPLACEMENT_CHARACTER: CodePoints = [0xfffd, 0xfffd];
const WHITESPACE: readonly CodePoints[] = [
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const NAME_CHARACTER = `[^${classRanges([...CONTROLS, REPLACEMENT_CHARACTER])}]`;
const NAME_EDGE = `[^${classRanges([...CONTROLS, ...WHITESPACE, REPLACEMENT_CHARACTER])}]`;

const PetNameSchema = {
  type: 'string',
  minLength: 1,
  maxLength: NAME_MAX_CHARACTERS,
  pattern: `^${NAME_EDGE}(${NAME_CHARACTER}*${NAME_EDGE})?$`,
  description:
    'Stored exactly as sent. No control character (U+0000-U+001F, U+007F-U+009F) or U+FFFD anywhere, and no ' +
    "whitespace at either end (ECMA-262's `\\s`), as `pattern` states; and no lone surrogate (a `\\uD800`-`\\uDFFF` " +
    'escape that is not half of a pair; RFC 7493), which a pattern cannot state in every engine: 400 as well.',
  'x-patternMessage':
    'must not start or end with whitespace, nor contain control characters, lone surrogates or U+FFFD (bytes that were not UTF-8)',
} as const;

/**
 * How an integer parameter is written: JSON's grammar of an integer (RFC 8259: an optional minus,
 * decimal digits without leading zero): `7`, `-7`, never `07`, `+7`, `7.0`, `7e0` or ` 7`; `-0` is 0.
 * openapi.json publishes it as the parameters' `x-text-pattern`.
 */
export const INTEGER_TEXT = '^-?(0|[1-9][0-9]*)$';

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

/**
 * The path's id is any int64, the spec's type: one no pet can have (0, -5, 2^63 - 1) names no pet,
 * which is a 404 as for any other; only what is not an int64 is a 400. Read as a bigint, exactly.
 */
const PetIdParameterSchema = { type: 'integer', format: 'int64' } as const;

const PetIdPathSchema = {
  type: 'object',
  properties: { petId: PetIdParameterSchema },
  required: ['petId'],
} as const;

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
  : S extends { type: 'integer'; format: 'int64' }
    ? bigint
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
  readonly format?: 'int64';
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
/** In `u` mode a surrogate code point is one not paired with its other half. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const INT64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n } as const;

/** An `int64` parameter, read exactly over the whole signed 64-bit range. */
function checkInt64(given: unknown): Checked {
  const value = typeof given === 'string' && integerText.test(given) ? BigInt(given) : undefined;
  return value !== undefined && value >= INT64.min && value <= INT64.max
    ? { ok: true, value }
    : { ok: false, problem: `must be an integer from ${INT64.min} to ${INT64.max}` };
}

function checkValue(schema: ValueSchema, given: unknown, fromString: boolean): Checked {
  const fail = (problem: string): Checked => ({ ok: false, problem });
  if (schema.enum)
    return schema.enum.includes(given as string)
      ? { ok: true, value: given }
      : fail(`must be one of ${schema.enum.join(', ')}`);
  if (schema.type === 'integer' && schema.format === 'int64') return checkInt64(given);
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
  // A lone surrogate fails the pattern's rule here: only ECMA-262 engines could state it (see NAME_CHARACTER).
  if (schema.pattern !== undefined && (LONE_SURROGATE.test(given) || !compiled(schema.pattern).test(given))) {
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
