/**
 * Every regex openapi.json publishes (each schema's `pattern`, each integer parameter's
 * `x-text-pattern`) under engines other than ECMA-262's: clients generate and validate with Rust's
 * `regex`, Python's `re` and Go's RE2 as well as with ajv. RE2 (re2js, a port of Go's engine, whose
 * syntax Rust's `regex` shares: no lookaround, no `\u` escape, `\s` ASCII only) must compile each and
 * judge every string as ECMA-262 with the `u` flag does (JSON Schema's dialect, and the service's), and
 * Python's `re` (python3, which cfn-lint, a prerequisite of the suite, runs on) must compile each and agree on a corpus.
 * Strings with a lone surrogate are left out: they are not Unicode, which only ECMA-262 can hold (the
 * name's description states their rule). Python's `$` also matches before a final newline, a quirk no
 * pattern can undo in every engine, so its corpus has no string ending in one.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import { OPENAPI_FILE } from '../../contract/files.ts';

const document: unknown = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));

/** Every published regex, by the JSON pointer of where it is. */
function publishedPatterns(value: unknown, pointer = ''): [string, string][] {
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    (key === 'pattern' || key === 'x-text-pattern') && typeof inner === 'string'
      ? [[`${pointer}/${key}`, inner] as [string, string]]
      : publishedPatterns(inner, `${pointer}/${key}`),
  );
}
const patterns = publishedPatterns(document);

const isSurrogate = (codePoint: number) => codePoint >= 0xd800 && codePoint <= 0xdfff;
/** Each code point alone, at either edge and inside a name, and after and before a digit. */
const around = (c: string) => [c, `Rex${c}`, `${c}Rex`, `R${c}x`, `7${c}`, `${c}7`];
const SPELLINGS = ['', '7', '-7', '07', '+7', '-0', '7.0', 'Rex', 'Rex Max', ' Rex', 'eA.eA', 'eA.eB', 'AAAA.AQ'];
function* corpus(lastCodePoint: number): Generator<string> {
  yield* SPELLINGS;
  for (let codePoint = 0; codePoint <= lastCodePoint; codePoint++)
    if (!isSurrogate(codePoint)) yield* around(String.fromCodePoint(codePoint));
  // Beyond the sweep: the rest of ECMA-262's whitespace, U+FEFF, U+FFFD and its neighbours, astral characters.
  for (const codePoint of [0x3000, 0x303f, 0xfeff, 0xfffc, 0xfffd, 0xfffe, 0xffff, 0x1f415, 0xe0001, 0x10ffff])
    yield* around(String.fromCodePoint(codePoint));
}

describe('the regexes of openapi.json under other engines', () => {
  it('are found: the name, the cursor, the idempotency key and the integer parameters', () => {
    expect(patterns.map(([pointer]) => pointer)).toEqual(
      expect.arrayContaining([
        '/components/schemas/NewPet/properties/name/pattern',
        '/components/parameters/cursor/schema/pattern',
        '/components/parameters/petId/x-text-pattern',
        '/components/parameters/idempotencyKey/schema/pattern',
      ]),
    );
  });

  it.each(patterns)(
    'RE2 compiles %s and judges every character of the BMP there as ECMA-262 does',
    (_pointer, pattern) => {
      const re2 = RE2JS.compile(pattern);
      const ecma = new RegExp(pattern, 'u');
      const differing: string[] = [];
      for (const text of corpus(0xffff)) if (re2.test(text) !== ecma.test(text)) differing.push(JSON.stringify(text));
      expect(differing.slice(0, 5)).toEqual([]);
    },
  );

  // Like cfn-lint (which needs it too): skipped with a warning on a machine without python3, failed under CI.
  const noPython = spawnSync('python3', ['--version']).error !== undefined;
  if (noPython && !process.env.CI) console.warn("Skipping Python's re check: python3 is not installed.");
  it.skipIf(noPython && !process.env.CI)(
    "Python's re compiles each and agrees with ECMA-262 on the characters up to U+3100",
    () => {
      const texts = [...corpus(0x3100)].filter((text) => !text.endsWith('\n'));
      const expected = patterns.map(([, pattern]) =>
        texts.map((text) => (new RegExp(pattern, 'u').test(text) ? 1 : 0)),
      );
      const python = spawnSync('python3', ['-c', PYTHON_VERDICTS], {
        input: JSON.stringify({ patterns: patterns.map(([, pattern]) => pattern), texts }),
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      });
      expect(python.error, 'python3 runs').toBeUndefined();
      expect(python.stderr).toBe('');
      const verdicts = JSON.parse(python.stdout) as number[][];
      const differing = patterns.flatMap(([pointer], p) =>
        texts
          .filter((_text, t) => verdicts[p]![t] !== expected[p]![t])
          .map((text) => `${pointer}: ${JSON.stringify(text)}`),
      );
      expect(differing.slice(0, 5)).toEqual([]);
    },
  );
});

/** JSON Schema's `pattern` in Python: `re.search`, as the `jsonschema` package runs it. */
const PYTHON_VERDICTS = `
import json, re, sys
given = json.load(sys.stdin)
compiled = [re.compile(pattern) for pattern in given["patterns"]]
print(json.dumps([[1 if regex.search(text) else 0 for text in given["texts"]] for regex in compiled]))
`;
