/**
 * One key, one counter: every spelling of an API key the service accepts (lib/http/auth.ts) passes
 * the production web ACL's WellFormedBearerKey rule and falls in the RatePerKey rule's one
 * aggregation instance for that key, judged by a model of both rules read from the synthesized
 * template (./wafModel.ts). The table is generated: every casing of the scheme, blanks between it and
 * the key, before and after the value, and a few refused shapes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { StaticApiKeys } from '../../lib/domain/apiKeys.ts';
import { authenticateCaller } from '../../lib/http/auth.ts';
import { generateApiKey } from '../../tools/keys/keys.ts';
import { synthesizedStages } from './templates.ts';
import { authorizationRules, fieldValue, type AuthorizationRules } from './wafModel.ts';

const of = synthesizedStages();
let rules: AuthorizationRules;
beforeAll(() => {
  rules = authorizationRules(of('production'));
});

/** Each of the 64 casings of `Bearer`. */
const SCHEMES = Array.from({ length: 64 }, (_, bits) =>
  [...'bearer'].map((letter, at) => (bits & (1 << at) ? letter.toUpperCase() : letter)).join(''),
);
const SEPARATORS = [' ', '  ', '   ', '\t', ' \t', '\u00a0', ''];
const BEFORE = ['', ' ', '\t'];
const AFTER = ['', ' ', '  ', '\t', ' \t', '\u00a0'];

/** The spellings of `key`: the product of the above, and shapes no one should be counted for. */
function spellings(key: string): string[] {
  const table: string[] = [];
  for (const scheme of SCHEMES)
    for (const separator of SEPARATORS)
      for (const before of BEFORE)
        for (const after of AFTER) table.push(`${before}${scheme}${separator}${key}${after}`);
  table.push(`Bearer ${key.toUpperCase()}`, `Bearer ${key} ${key}`, `Bearer ${key},`, `Basic ${key}`, key);
  return table;
}

/** Whether the service accepts `value` as it arrives (HTTP has stripped the blanks around it). */
const accepts = (value: string, keys: StaticApiKeys): Promise<boolean> =>
  authenticateCaller(fieldValue(value), keys).then(
    () => true,
    () => false,
  );

describe('the web ACL reads Authorization as the service does', () => {
  it('transforms the value the same way for the bearer-key rule and the rate per key: blanks compressed, then lower case', () => {
    const expected = [
      { Priority: 0, Type: 'COMPRESS_WHITE_SPACE' },
      { Priority: 1, Type: 'LOWERCASE' },
    ];
    expect(rules.patternTransformations).toEqual(expected);
    expect(rules.keyTransformations).toEqual(expected);
  });

  it('passes, and counts once, every spelling of a key the service accepts; counts nothing else apart', async () => {
    const figures = [];
    for (let round = 0; round < 3; round++) {
      const { key } = generateApiKey();
      const keys = new StaticApiKeys([key]);
      const table = spellings(key);
      const accepted = [];
      const counters = new Set<string>();
      for (const spelling of table) {
        const serviceAccepts = await accepts(spelling, keys);
        // Whether WAF sees the value as HTTP defines it, or with its surrounding blanks, it passes only
        // a value it counts as this key.
        for (const seen of [fieldValue(spelling), spelling]) {
          if (rules.passes(seen)) counters.add(rules.aggregationKey(seen));
        }
        if (serviceAccepts) {
          accepted.push(spelling);
          expect(rules.passes(fieldValue(spelling)), JSON.stringify(spelling)).toBe(true);
        }
      }
      expect(counters).toEqual(new Set([`bearer ${key.toLowerCase()}`]));
      figures.push({ spellings: table.length, accepted: accepted.length, counters: counters.size });
    }
    // 64 casings x 3 runs of spaces x 3 x 6 blanks around (those HTTP strips: SP, HTAB): 64 x 3 x 3 x 5.
    expect(figures).toEqual(Array(3).fill({ spellings: 8069, accepted: 2880, counters: 1 }));
  });

  it('refuses in the service what the rule refuses, with a clear Error body: a tab after the scheme', async () => {
    const { key } = generateApiKey();
    const error = await authenticateCaller(`Bearer\t${key}`, new StaticApiKeys([key])).catch((thrown) => thrown);
    expect(error.toBody()).toEqual({
      code: 'UNAUTHORIZED',
      message: 'Separate the Bearer scheme from the key with a space: "Authorization: Bearer <API_KEY>".',
      status: 401,
    });
  });
});
