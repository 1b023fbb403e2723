/**
 * The size of each source file and of each function in it, read with Babel's parser (TypeScript 7
 * ships no JS API). A function's size is its lines from its first to its last, nested ones included.
 */
import { parse } from '@babel/parser';
import { read, sourceFiles } from './sources.ts';

export const MAX_FILE_LINES = 500;
export const MAX_FUNCTION_LINES = 80;

/** Tests, and what a tool writes: the client's types, generated from openapi.json by `npm run openapi`. */
const NOT_SOURCE = [/(^|\/)test\//, /\.test\.ts$/, /^client\/src\/schema\.ts$/, /\.d\.ts$/];

export const sizedSources = (): string[] =>
  sourceFiles().filter((path) => !NOT_SOURCE.some((pattern) => pattern.test(path)));

export interface FunctionSize {
  where: string;
  name: string;
  lines: number;
}

const FUNCTION_TYPES = new Set([
  'FunctionDeclaration',
  'FunctionExpression',
  'ArrowFunctionExpression',
  'ClassMethod',
  'ClassPrivateMethod',
  'ObjectMethod',
]);

interface Node {
  type: string;
  loc?: { start: { line: number }; end: { line: number } };
  id?: { name?: string } | null;
  key?: { name?: string } | null;
}

/** Every function of `source`, with the name its declaration, method or variable gives it. */
export function functionSizes(file: string, source: string): FunctionSize[] {
  const ast = parse(source, { sourceType: 'module', plugins: ['typescript'], errorRecovery: false });
  const found: FunctionSize[] = [];
  const walk = (node: unknown, name: string) => {
    if (Array.isArray(node)) return node.forEach((child) => walk(child, name));
    if (!node || typeof node !== 'object' || typeof (node as Node).type !== 'string') return;
    const current = node as Node & Record<string, unknown>;
    const ownName = current.id?.name ?? current.key?.name ?? name;
    if (FUNCTION_TYPES.has(current.type) && current.loc) {
      found.push({
        where: `${file}:${current.loc.start.line}`,
        name: ownName,
        lines: current.loc.end.line - current.loc.start.line + 1,
      });
    }
    const declared =
      current.type === 'VariableDeclarator' || current.type === 'ClassProperty' || current.type === 'ObjectProperty'
        ? ownName
        : name;
    for (const [key, child] of Object.entries(current))
      if (key !== 'loc' && key !== 'leadingComments' && key !== 'trailingComments') walk(child, declared);
  };
  walk(ast.program, '(anonymous)');
  return found;
}

export const fileLines = (path: string): number => read(path).split('\n').length - (read(path).endsWith('\n') ? 1 : 0);

export const oversizedFiles = (): string[] =>
  sizedSources().flatMap((path) => (fileLines(path) > MAX_FILE_LINES ? [`${path}: ${fileLines(path)} lines`] : []));

export const oversizedFunctions = (): string[] =>
  sizedSources().flatMap((path) =>
    functionSizes(path, read(path))
      .filter(({ lines }) => lines > MAX_FUNCTION_LINES)
      .map(({ where, name, lines }) => `${where} ${name}: ${lines} lines`),
  );
