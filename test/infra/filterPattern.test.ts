/**
 * The filter-pattern reader the monitoring tests judge log lines with (tools/stage-emulator/src/alarms/filterPattern.ts),
 * on the examples of CloudWatch's "Filter pattern syntax for metric filters" and on Lambda's text
 * log format: it must refuse what it cannot read, and tell a match from a miss.
 */
import { describe, expect, it } from 'vitest';
import { matchesFilterPattern } from '@petstore/stage-emulator/filterPattern';

const event = JSON.stringify({
  eventType: 'UpdateTrail',
  user: { id: 1, name: 'me' },
  ok: true,
  nothing: null,
  message: 'Could not refresh the API keys in t',
});

describe('matchesFilterPattern', () => {
  it.each([
    ['{ $.eventType = "UpdateTrail" }', true],
    ['{ $.eventType = "Update*" }', true],
    ['{ $.eventType = "*Trail" }', true],
    ['{ $.eventType = "Update" }', false],
    ['{ $.eventType != "UpdateTrail" }', false],
    ['{ $.missing != "x" }', false],
    ['{ $.user.id = 1 }', true],
    ['{ $.user.id = 2 }', false],
    ['{ $.user.name = "me" && $.ok IS TRUE }', true],
    ['{ ($.user.name = "you") || ($.ok IS TRUE) }', true],
    ['{ ($.user.name = "you") || ($.ok IS FALSE) }', false],
    ['{ $.nothing IS NULL }', true],
    ['{ $.absent NOT EXISTS }', true],
    ['{ ($.message = "Could not refresh the API keys*") && (($.ok IS TRUE) || ($.user.id = 3)) }', true],
    ['"UpdateTrail"', true],
    ['UpdateTrail me', true],
    ['UpdateTrail -me', false],
  ])('%s on a JSON event: %s', (pattern, expected) => {
    expect(matchesFilterPattern(pattern, event)).toBe(expected);
  });

  it("reads a JSON pattern on the JSON after Lambda's text-format prefix, and never on text that is not JSON", () => {
    const lambdaLine = `2026-11-28T10:00:00.000Z\tc0ffee00-0000-4000-8000-000000000000\tERROR\t${JSON.stringify({ level: 'ERROR', operation: 'authorize' })}`;
    expect(matchesFilterPattern('{ ($.level = "ERROR") && ($.operation = "authorize") }', lambdaLine)).toBe(true);
    expect(
      matchesFilterPattern(
        '{ $.level = "ERROR" }',
        '2026-11-28T10:00:00.000Z\tid\tERROR\tInvoke Error {"errorType":"Error","errorMessage":"Unauthorized"}',
      ),
    ).toBe(false);
    expect(matchesFilterPattern('{ $.level = "ERROR" }', 'START RequestId: id Version: 1')).toBe(false);
  });

  it('refuses a pattern it cannot read rather than answer for it', () => {
    for (const pattern of ['{ $.a = }', '{ $.a ~ "x" }', '{ $.a = "x"', '[ip, user, status=4*]', '{ ($.a = "x" }']) {
      expect(() => matchesFilterPattern(pattern, event), pattern).toThrow();
    }
  });
});
