/**
 * The metric math the templates use, per period: `rate * 100` (a rate with an empty denominator)
 * and `a + b + c + ...` (a sum with terms missing), with the rule of "Using metric math": missing
 * values count 0 when another series has a value; a division by zero drops the point.
 */
import { describe, expect, it } from 'vitest';
import { evaluateExpression, MathSyntaxError, parseExpression } from '../../src/alarms/metricMath.ts';

const evaluate = (expression: string, values: Record<string, number | undefined>) =>
  evaluateExpression(parseExpression(expression), (id) => values[id]);

describe("the templates' expression shapes", () => {
  it('rate * 100: the share of 4XX answers in percent, and no data point in a period without requests', () => {
    expect(evaluate('rate * 100', { rate: 0.25 })).toBe(25);
    expect(evaluate('rate * 100', { rate: 0 })).toBe(0);
    expect(evaluate('rate * 100', { rate: undefined })).toBeUndefined();
  });

  const SUM = 'getitem + putitem + updateitem + deleteitem + query + scan';
  it('a sum of every operation: the terms with data, the missing ones counting 0', () => {
    expect(evaluate(SUM, { getitem: 1, putitem: 2, updateitem: 3, deleteitem: 4, query: 5, scan: 6 })).toBe(21);
    expect(evaluate(SUM, { putitem: 7, query: 2 })).toBe(9);
    expect(evaluate(SUM, { scan: 0 })).toBe(0);
  });

  it('a sum with every term missing has no data point (not 0)', () => {
    expect(evaluate(SUM, {})).toBeUndefined();
  });
});

describe('arithmetic', () => {
  it.each([
    ['a + b * c', { a: 1, b: 2, c: 3 }, 7],
    ['(a + b) * c', { a: 1, b: 2, c: 3 }, 9],
    ['a - b - c', { a: 10, b: 2, c: 3 }, 5],
    ['a / b / c', { a: 12, b: 2, c: 3 }, 2],
    ['-a + 2', { a: 5 }, -3],
    ['a * -1', { a: 5 }, -5],
    ['100 * (errors / (requests))', { errors: 1, requests: 4 }, 25],
    ['m_1+m2', { m_1: 1.5, m2: 2.25 }, 3.75],
  ])('%s with %j is %d', (expression, values, expected) => {
    expect(evaluate(expression, values)).toBe(expected);
  });

  it('an error rate with an empty denominator has no data point: missing requests count 0 and x / 0 is dropped', () => {
    expect(evaluate('errors / requests * 100', { errors: 2, requests: 0 })).toBeUndefined();
    expect(evaluate('errors / requests * 100', { errors: 2, requests: undefined })).toBeUndefined();
    expect(evaluate('errors / requests * 100', { errors: undefined, requests: 10 })).toBe(0);
    expect(evaluate('errors / requests * 100', { errors: undefined, requests: undefined })).toBeUndefined();
  });

  it('a missing series counts 0 across the whole expression, not only at its own operator', () => {
    expect(evaluate('(a + 1) * b', { a: undefined, b: 3 })).toBe(3);
  });
});

describe('what the evaluator refuses, naming the expression', () => {
  it.each([
    ['FILL(m1, 0)', /"FILL\(m1, 0\)" uses FILL/],
    ['ANOMALY_DETECTION_BAND(m1, 2)', /uses ANOMALY_DETECTION_BAND/],
    ['SUM(METRICS())', /uses SUM/],
    ['SELECT AVG(CPUUtilization) FROM SCHEMA("AWS/EC2")', /uses SELECT/],
    ['m1 ^ 2', /"m1 \^ 2" has "\^"/],
    ['m1 > 5', /has ">"/],
    ['m1 +', /ends where a value was expected/],
    ['(m1 + m2', /"\(" is not closed/],
    ['m1 m2', /unexpected value/],
    ['100 * 2', /reads no metric/],
  ])('%s', (expression, message) => {
    expect(() => parseExpression(expression)).toThrow(MathSyntaxError);
    expect(() => parseExpression(expression)).toThrow(message);
  });
});
