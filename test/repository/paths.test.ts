/**
 * Every repository path named in README.md, docs/, a package's README, a code comment or a test's
 * title exists (test/repository/namedPaths.ts says what counts as a path). A file moved or retired
 * fails here until every mention of it follows.
 */
import { describe, expect, it } from 'vitest';
import { missing, namedPaths } from './namedPaths.ts';

describe('the paths the documents and comments name', () => {
  it('are found: the documents and comments name hundreds', () => {
    const named = namedPaths();
    expect(named.length).toBeGreaterThan(400);
    expect(named.some(({ where }) => where.startsWith('README.md:'))).toBe(true);
    expect(named.some(({ where }) => where.startsWith('docs/'))).toBe(true);
    expect(named.some(({ where }) => where.startsWith('lib/'))).toBe(true);
  });

  it('all exist', () => {
    expect(missing().map(({ where, named }) => `${where} names ${named}`)).toEqual([]);
  });
});
