/**
 * openapi.json under a maintained outside linter: Redocly's `recommended` rules, as a client team's CI
 * would run them. Any problem fails the test unless contract/lintExceptions.ts justifies its rule;
 * an exception that no longer fires fails it too, so the list stays true.
 */
import { createConfig, lint, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { OPENAPI_FILE } from '../../contract/files.ts';
import { LINT_EXCEPTIONS } from '../../contract/lintExceptions.ts';

const describeProblem = (problem: NormalizedProblem) =>
  `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location.map((where) => where.pointer).join(', ')}`;

describe("openapi.json under Redocly's recommended rules", async () => {
  // An explicit ruleset: no redocly.yaml or ignore file found on disk can change what is checked.
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lint({ ref: OPENAPI_FILE, config });
  const excepted: Record<string, string> = LINT_EXCEPTIONS.redocly;

  it('has no problem but the ones contract/lintExceptions.ts justifies', () => {
    expect(problems.filter((problem) => !(problem.ruleId in excepted)).map(describeProblem)).toEqual([]);
  });

  it('still needs every exception listed there', () => {
    expect(Object.keys(excepted).filter((rule) => !problems.some((problem) => problem.ruleId === rule))).toEqual([]);
  });

  it('catches what it is here for: a `required` beside a `$ref`, and an unused component', async () => {
    const sample = {
      openapi: '3.1.1',
      info: { title: 'sample', version: '1' },
      paths: {},
      components: {
        headers: { X: { schema: { type: 'string' } } },
        responses: {
          Unused: { description: 'unused', headers: { X: { $ref: '#/components/headers/X', required: true } } },
        },
      },
    };
    const found = await lintFromString({ source: JSON.stringify(sample), absoluteRef: '/sample.json', config });
    expect(found.map((problem) => problem.ruleId)).toEqual(
      expect.arrayContaining(['spec-ref-siblings', 'no-unused-components']),
    );
  });
});
