import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../lib/domain/errors.ts';
import { ListPetsQuery, NewPet, PetIdPath, jsonSchemas, parseOrThrow } from '../../../lib/domain/schemas.ts';

const problem = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    return (error as ApiError).message;
  }
  throw new Error('no error');
};

describe('the schemas', () => {
  it('are plain JSON Schema data, one object per schema, that OpenAPI can embed as they are', () => {
    expect(Object.keys(jsonSchemas).sort()).toEqual(['ListPetsQuery', 'NewPet', 'Pet', 'PetIdPath', 'PetStatus']);
    expect(JSON.parse(JSON.stringify(jsonSchemas))).toEqual(jsonSchemas);
    expect(jsonSchemas.Pet.required).toEqual(['id', 'name', 'categoryId']);
  });

  it('name every problem of a body at once, in a message a client can act on', () => {
    expect(problem(() => parseOrThrow(NewPet, { name: 42, id: 1, colour: 'red' }, 'body'))).toBe(
      "Invalid body: 'name' must be a string; 'categoryId' is required; unknown field 'id', 'colour'.",
    );
    expect(problem(() => parseOrThrow(NewPet, { name: ' \t', categoryId: 0, status: 'lost' }, 'body'))).toBe(
      `Invalid body: 'name' must not start or end with whitespace, nor contain control characters, lone surrogates or U+FFFD (bytes that were not UTF-8); 'categoryId' must be an integer from 1 to ${Number.MAX_SAFE_INTEGER}; 'status' must be one of available, pending, sold.`,
    );
    expect(problem(() => parseOrThrow(NewPet, { name: 'a\u0007b', categoryId: 1 }, 'body'))).toBe(
      "Invalid body: 'name' must not start or end with whitespace, nor contain control characters, lone surrogates or U+FFFD (bytes that were not UTF-8).",
    );
    expect(problem(() => parseOrThrow(NewPet, ['x'], 'body'))).toBe('Invalid body: the body must be a JSON object.');
  });

  it("refuse in a name exactly the code points of [\\p{Cc}\\uFFFD], and ECMA-262's \\s at either edge, spelled code point by code point: every code point, alone, at either edge, inside", () => {
    const pattern = NewPet.properties.name.pattern;
    // Spelled so that every engine reads it alike: no \s, no \u escape, no property escape.
    expect(pattern).not.toMatch(/\\[sSuUp]/);
    const byCodePoints = new RegExp(pattern, 'u');
    const byProperties = /^[^\s\p{Cc}\uFFFD]([^\p{Cc}\uFFFD]*[^\s\p{Cc}\uFFFD])?$/u;
    const differing: string[] = [];
    for (let codePoint = 0; codePoint <= 0x10ffff; codePoint++) {
      if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue; // not a character: see the next test
      const c = String.fromCodePoint(codePoint);
      for (const name of [c, `a${c}`, `${c}a`, `a${c}a`]) {
        if (byCodePoints.test(name) !== byProperties.test(name))
          differing.push(`U+${codePoint.toString(16).toUpperCase()} in ${JSON.stringify(name)}`);
      }
    }
    expect(differing.slice(0, 5)).toEqual([]);
    expect(byProperties.test('a\u0085b')).toBe(false);
  });

  it('refuse a name with a lone surrogate, which its pattern leaves to the description, with the same message', () => {
    for (const name of ['Re\ud800x', '\udc00', 'Rex\ud83d', '\udc15Rex', '\udc15\ud83d'])
      expect(problem(() => parseOrThrow(NewPet, { name, categoryId: 1 }, 'body'))).toBe(
        "Invalid body: 'name' must not start or end with whitespace, nor contain control characters, lone surrogates or U+FFFD (bytes that were not UTF-8).",
      );
    expect(parseOrThrow(NewPet, { name: 'Re\ud83d\udc15x', categoryId: 1 }, 'body').name).toBe('Re\u{1f415}x');
    expect(NewPet.properties.name.description).toContain('no lone surrogate');
  });

  it('keep the name as sent, count characters rather than UTF-16 units, and keep only declared fields', () => {
    expect(parseOrThrow(NewPet, { name: 'Rex\u00a0Max', categoryId: 3 }, 'body')).toEqual({
      name: 'Rex\u00a0Max',
      categoryId: 3,
    });
    for (const name of [
      ' ',
      '\u00a0',
      ' Rex',
      'Rex ',
      '\ufeffRex',
      'Rex\u2028',
      `${' '.repeat(50)}${'x'.repeat(256)}`,
    ]) {
      expect(problem(() => parseOrThrow(NewPet, { name, categoryId: 1 }, 'body'))).toContain("'name' must");
    }
    const emoji = '🐕'.repeat(256);
    expect(parseOrThrow(NewPet, { name: emoji, categoryId: 1, status: 'sold' }, 'body')).toEqual({
      name: emoji,
      categoryId: 1,
      status: 'sold',
    });
    expect(problem(() => parseOrThrow(NewPet, { name: `${emoji}x`, categoryId: 1 }, 'body'))).toContain(
      'at most 256 characters',
    );
  });

  it('read parameters as decimal strings, with defaults', () => {
    expect(parseOrThrow(ListPetsQuery, {}, 'query')).toEqual({ limit: 20 });
    expect(
      parseOrThrow(ListPetsQuery, { limit: '7', status: 'pending', cursor: 'eA.eA', other: 'x' }, 'query'),
    ).toEqual({ limit: 7, status: 'pending', cursor: 'eA.eA' });
    // A cursor is canonical base64url: the same bytes spelled otherwise are not one.
    for (const cursor of ['eB.eA', 'eA==.eA', 'eA.eA!', 'e+.eA', 'eA'])
      expect(problem(() => parseOrThrow(ListPetsQuery, { cursor }, 'query'))).toContain("'cursor'");
    // A petId is any int64, read exactly, as a bigint: 2^63 - 1 is not 2^63.
    for (const petId of ['7', '0', '-7', '9007199254740993', '9223372036854775807', '-9223372036854775808'])
      expect(parseOrThrow(PetIdPath, { petId }, 'path')).toEqual({ petId: BigInt(petId) });
    expect(parseOrThrow(PetIdPath, { petId: '-0' }, 'path')).toEqual({ petId: 0n });
    for (const petId of ['1e3', ' 1', '0x10', '1.0', '', '01', '+1', '-01', '-', '00000000000000001'])
      expect(problem(() => parseOrThrow(PetIdPath, { petId }, 'path'))).toContain("'petId'");
    for (const petId of ['9223372036854775808', '-9223372036854775809'])
      expect(problem(() => parseOrThrow(PetIdPath, { petId }, 'path'))).toBe(
        "Invalid path: 'petId' must be an integer from -9223372036854775808 to 9223372036854775807.",
      );
    for (const limit of ['-1', '-0'])
      expect(problem(() => parseOrThrow(ListPetsQuery, { limit }, 'query'))).toContain(
        "'limit' must be an integer from 1",
      );
    // A body integer must be a JSON number, never a string.
    expect(problem(() => parseOrThrow(NewPet, { name: 'Rex', categoryId: '1' }, 'body'))).toContain("'categoryId'");
  });
});
