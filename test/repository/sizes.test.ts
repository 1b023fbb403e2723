/**
 * Small pieces: no source file over 500 lines, no function over 80 (tests and generated code
 * excluded: test/repository/sizes.ts says which), so each can be read whole.
 */
import { describe, expect, it } from 'vitest';
import {
  MAX_FILE_LINES,
  MAX_FUNCTION_LINES,
  functionSizes,
  oversizedFiles,
  oversizedFunctions,
  sizedSources,
} from './sizes.ts';

describe('the sizes of the sources', () => {
  it('reads every source, and every function in it', () => {
    const sources = sizedSources();
    expect(sources.length).toBeGreaterThan(100);
    expect(sources).toContain('functions/createPet.ts');
    expect(sources.filter((path) => path.includes('/test/') || path.startsWith('test/'))).toEqual([]);
  });

  it(`has no file over ${MAX_FILE_LINES} lines`, () => {
    expect(oversizedFiles()).toEqual([]);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    expect(oversizedFunctions()).toEqual([]);
  });

  it('measures declarations, methods, arrows and nested functions, each by its own lines', () => {
    const source = [
      'export function outer() {',
      '  const inner = () => {',
      '    return 1;',
      '  };',
      '  return inner;',
      '}',
      'class A {',
      '  method(): void {}',
      '}',
      'const o = { f() { return 2; } };',
    ].join('\n');
    expect(functionSizes('x.ts', source).map(({ name, lines }) => `${name} ${lines}`)).toEqual([
      'outer 6',
      'inner 3',
      'method 1',
      'f 1',
    ]);
  });
});
