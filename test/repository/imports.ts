/**
 * The repository's import graph: every module of ours and the modules of ours it imports
 * (type-only, re-exported and dynamic imports included), read from the sources.
 */
import { posix } from 'node:path';
import { read, sourceFiles } from './sources.ts';

/** Every module specifier `source` imports or re-exports, statically or dynamically. */
export function importsOf(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  // A statement starts its line; a line that starts with a quote is a string (a test's made-up source).
  const statements = /^\s*(?:import|export)\s+(?:type\s+)?(?:[\w$*{}\s,]+?\s+from\s+)?['"]([^'"]+)['"]/gm;
  const dynamic = /^(?!\s*['"`]).*?\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/gm;
  return [...code.matchAll(statements), ...code.matchAll(dynamic)].map((match) => match[1]!);
}

/** Each module's imports of other modules of ours, as repository paths. */
export function importGraph(): Map<string, string[]> {
  const modules = sourceFiles().filter((path) => !path.endsWith('.d.ts'));
  return new Map(
    modules.map((file) => [
      file,
      importsOf(read(file))
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => posix.normalize(posix.join(posix.dirname(file), specifier))),
    ]),
  );
}

/** The cycles of `graph`, each as the path around it; none for a graph without one. */
export function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}
