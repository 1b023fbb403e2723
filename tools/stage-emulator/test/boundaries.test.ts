/**
 * The package as its own piece, held by reading every import of the repository (type-only imports,
 * re-exports, dynamic imports and the scripts a sandbox is started with too): no import circle
 * among its source files; none of them imports a file outside the package (not the product, not
 * the local API, not a script or a test), only @petstore/local-kit by name, which imports nothing
 * of the repository either; none reaches, through any chain of imports, a file that imports the
 * package; and neither the product (functions/, lib/, infra/) nor the local API (local/) imports it.
 */
import { existsSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cyclesOf, importGraph, importsOf } from '../../../test/repository/imports.ts';
import { read, ROOT } from '../../../test/repository/sources.ts';

const PACKAGE_SOURCE = 'tools/stage-emulator/src/';
const KIT_SOURCE = 'tools/local-kit/src/';

/** The repository files `file` starts (`new URL('./x', import.meta.url)`): edges of ours that are no import. */
function startedBy(file: string): string[] {
  const code = read(file)
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  return [...code.matchAll(/\bnew URL\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*,\s*import\.meta\.url\s*\)/g)]
    .map((match) => posix.normalize(posix.join(posix.dirname(file), match[1]!)))
    .filter((target) => existsSync(join(ROOT, target)) && statSync(join(ROOT, target)).isFile());
}

/** Each module's imports, re-exports and dynamic imports (test/repository/imports.ts), and the files it starts. */
const GRAPH = new Map([...importGraph()].map(([file, imports]) => [file, [...imports, ...startedBy(file)]]));
const FILES = [...GRAPH.keys()];
const PACKAGE_FILES = FILES.filter((file) => file.startsWith(PACKAGE_SOURCE));
const inPackage = (file: string) => file.startsWith(PACKAGE_SOURCE);

/** Every import circle among `files` (each as `a -> b -> a`). */
function circles(files: readonly string[]): string[] {
  const among = new Map(files.map((file) => [file, (GRAPH.get(file) ?? []).filter((next) => files.includes(next))]));
  return cyclesOf(among).map((cycle) => cycle.join(' -> '));
}

/** Every file reachable from `starts` through imports, with the chain that reaches it. */
function reachable(starts: readonly string[]): Map<string, string[]> {
  const chains = new Map<string, string[]>(starts.map((file) => [file, [file]]));
  const queue = [...starts];
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const target of GRAPH.get(file) ?? []) {
      if (chains.has(target)) continue;
      chains.set(target, [...chains.get(file)!, target]);
      queue.push(target);
    }
  }
  return chains;
}

describe('the stage emulator package', () => {
  it('reads its source files and their imports', () => {
    expect(PACKAGE_FILES.length).toBeGreaterThan(25);
    expect(GRAPH.get(`${PACKAGE_SOURCE}restApi.ts`)).toContain(`${PACKAGE_SOURCE}routing.ts`);
    expect(GRAPH.get(`${PACKAGE_SOURCE}sandbox.ts`)).toContain(`${PACKAGE_SOURCE}lambdaRuntime.mjs`);
  });

  it('has no import circle among its source files, type-only imports included', () => {
    expect(circles(PACKAGE_FILES)).toEqual([]);
  });

  it('imports no file outside itself: not the product, the local API, a script, a tool or a test', () => {
    const wrong = PACKAGE_FILES.flatMap((file) =>
      (GRAPH.get(file) ?? []).filter((target) => !inPackage(target)).map((target) => `${file} -> ${target}`),
    );
    expect(wrong).toEqual([]);
  });

  it('imports of the workspace packages only @petstore/local-kit, by name; the kit imports nothing of the repository', () => {
    const kitFiles = FILES.filter((file) => file.startsWith(KIT_SOURCE));
    expect(kitFiles.length).toBeGreaterThan(5);
    const named = (file: string) => importsOf(read(file)).filter((specifier) => specifier.startsWith('@petstore/'));
    const wrong = [
      ...PACKAGE_FILES.flatMap((file) =>
        named(file)
          .filter((specifier) => !specifier.startsWith('@petstore/local-kit/'))
          .map((specifier) => `${file} -> ${specifier}`),
      ),
      ...kitFiles.flatMap((file) => [
        ...named(file).map((specifier) => `${file} -> ${specifier}`),
        ...(GRAPH.get(file) ?? [])
          .filter((target) => !target.startsWith(KIT_SOURCE))
          .map((target) => `${file} -> ${target}`),
      ]),
      ...FILES.filter((file) => !file.startsWith(KIT_SOURCE)).flatMap((file) =>
        (GRAPH.get(file) ?? [])
          .filter((target) => target.startsWith(KIT_SOURCE))
          .map((target) => `${file} -> ${target} (by path, not by name)`),
      ),
    ];
    expect(wrong).toEqual([]);
  });

  it('reaches none of its importers through any chain of imports', () => {
    const importers = FILES.filter((file) => !inPackage(file) && (GRAPH.get(file) ?? []).some(inPackage));
    expect(importers).toContain('scripts/startDeployed.ts');
    const chains = reachable(PACKAGE_FILES);
    const circular = importers.filter((file) => chains.has(file)).map((file) => chains.get(file)!.join(' -> '));
    expect(circular).toEqual([]);
  });

  it('is imported by neither the product (functions/, lib/, infra/) nor the local API (local/)', () => {
    const wrong = FILES.filter((file) => /^(functions|lib|infra|local)\//.test(file)).flatMap((file) =>
      (GRAPH.get(file) ?? []).filter(inPackage).map((target) => `${file} -> ${target}`),
    );
    expect(wrong).toEqual([]);
  });
});
