/**
 * The spec's resources and parameters as zod/mini schemas: handlers validate with them and
 * TypeScript takes its types from them. zod/mini keeps the bundle small (about 20 KB).
 */
import * as z from 'zod/mini';
import { ApiError } from './errors.ts';

export const PET_STATUSES = ['available', 'pending', 'sold'] as const;
export const NAME_MAX_CHARACTERS = 256;
export const LIMIT = { min: 1, max: 100, default: 20 } as const;
/** The largest int64 that survives a JSON round trip in every client (2^53 - 1). */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

const idRange = `an integer from 1 to ${MAX_ID}`;

export const PetStatus = z.enum(PET_STATUSES, { error: `must be one of ${PET_STATUSES.join(', ')}` });

/** A missing field is "required", not "of the wrong type". */
const requiredOr = (message: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : message;

const PetName = z.string({ error: requiredOr('must be a string') }).check(
  z.trim(),
  z.minLength(1, 'must not be empty'),
  z.refine((name) => [...name].length <= NAME_MAX_CHARACTERS, `must be at most ${NAME_MAX_CHARACTERS} characters`),
  z.refine((name) => !/\p{Cc}/u.test(name), 'must not contain control characters'),
  // A lone surrogate (valid in a JSON escape) cannot be stored as UTF-8: it would come back as U+FFFD.
  z.refine((name) => !/\p{Cs}/u.test(name), 'must be valid Unicode text (no lone surrogates)'),
);

const Int64 = z.int({ error: requiredOr(`must be ${idRange}`) }).check(
  z.minimum(1, `must be ${idRange}`),
  z.maximum(MAX_ID, `must be ${idRange}`),
);

export const NewPet = z.strictObject(
  { name: PetName, categoryId: Int64, status: z.optional(PetStatus) },
  { error: 'the body must be a JSON object' },
);

export type PetStatus = z.infer<typeof PetStatus>;
export type NewPet = z.infer<typeof NewPet>;
export interface Pet extends NewPet {
  id: number;
}

/** A whole decimal number, as path and query parameters carry it, within [min, max]. */
const decimalParameter = (min: number, max: number) => {
  const message = `must be an integer from ${min} to ${max}`;
  return z.pipe(
    z.string().check(z.regex(/^\d{1,16}$/, message)),
    z.pipe(z.transform(Number), z.number().check(z.minimum(min, message), z.maximum(max, message))),
  );
};

export const ListPetsQuery = z.object({
  limit: z._default(decimalParameter(LIMIT.min, LIMIT.max), LIMIT.default),
  status: z.optional(PetStatus),
  cursor: z.optional(z.string().check(z.minLength(1, 'must not be empty'))),
});
export type ListPetsQuery = z.infer<typeof ListPetsQuery>;

export const PetIdPath = z.object({ petId: decimalParameter(1, MAX_ID) });

/**
 * Validates `input` against `schema`; on failure throws a 400 whose message names each
 * offending field, so a client can fix its request without guessing.
 */
export function parseOrThrow<S extends z.ZodMiniType>(schema: S, input: unknown, where: string): z.infer<S> {
  const result = z.safeParse(schema, input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') return `unknown field ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
    const field = issue.path.join('.');
    return field ? `'${field}' ${issue.message}` : issue.message;
  });
  throw new ApiError('VALIDATION_FAILED', `Invalid ${where}: ${[...new Set(problems)].join('; ')}.`);
}
