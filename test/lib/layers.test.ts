/**
 * The layers of lib/, held by reading every import of lib/ and functions/ (type-only imports too):
 *
 *   functions/ -> lib/service.ts (the composition root) -> lib/http/ -> lib/store/ -> lib/domain/
 *
 * Imports only run downward: domain imports nothing of ours but domain and only Node's built-ins;
 * store adds the AWS SDK; http adds middy; nothing in lib/ imports functions/ or the tools around
 * them (infra, local, scripts, test, contract, client, bench). The route prose
 * (lib/domain/routeDocs.ts) is imported by neither, so no bundle carries it. No layer imports
 * `node:async_hooks` (`FORBIDDEN`).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsOf } from '../repository/imports.ts';

type Layer = 'domain' | 'store' | 'http' | 'root' | 'functions';

/** What each layer may import: our own layers, and packages by prefix. */
const ALLOWED: Record<Layer, { layers: readonly Layer[]; packages: readonly string[] }> = {
  domain: { layers: ['domain'], packages: ['node:'] },
  store: { layers: ['domain', 'store'], packages: ['node:', '@aws-sdk/'] },
  http: { layers: ['domain', 'store', 'http'], packages: ['node:', '@middy/', 'aws-lambda'] },
  root: { layers: ['domain', 'store'], packages: ['node:'] },
  functions: { layers: ['domain', 'store', 'http', 'root'], packages: ['node:'] },
};

const ROUTE_DOCS = 'lib/domain/routeDocs.ts';

/** Built-ins no file of lib/ or functions/ may import, and why. */
const FORBIDDEN: Readonly<Record<string, string>> = {
  'node:async_hooks':
    "a request's state travels with what it calls (lib/store/deadline.ts): on Node 22 AsyncLocalStorage's promise hooks slow every promise of a cold start",
};

/** The layer of a repository path; undefined for a file outside lib/ and functions/. */
function layerOf(path: string): Layer | 'unlayered' | undefined {
  const match = /^lib\/(domain|store|http)\/[^/]+\.ts$/.exec(path);
  if (match) return match[1] as Layer;
  if (path === 'lib/service.ts') return 'root';
  if (/^functions\/[^/]+\.ts$/.test(path)) return 'functions';
  return path.startsWith('lib/') || path.startsWith('functions/') ? 'unlayered' : undefined;
}

/** Why each of `file`'s imports breaks the layering; empty when none does. */
function violations(file: string, specifiers: readonly string[]): string[] {
  const layer = layerOf(file);
  if (layer === undefined) return [];
  if (layer === 'unlayered') return [`${file} is in no layer: put it in lib/domain, lib/store or lib/http`];
  const allowed = ALLOWED[layer];
  const found: string[] = [];
  for (const specifier of specifiers) {
    const forbidden = FORBIDDEN[specifier];
    if (forbidden) {
      found.push(`${file} imports ${specifier}: ${forbidden}`);
      continue;
    }
    if (!specifier.startsWith('.')) {
      if (!allowed.packages.some((prefix) => specifier.startsWith(prefix))) {
        found.push(`${file} imports ${specifier}: ${layer} may import only packages ${allowed.packages.join(', ')}`);
      }
      continue;
    }
    const target = posix.join(posix.dirname(file), specifier);
    const targetLayer = layerOf(target);
    if (target === ROUTE_DOCS) {
      found.push(`${file} imports ${specifier}: the route prose is for infra/ and contract/ only, never a bundle`);
    } else if (targetLayer === undefined || targetLayer === 'unlayered' || !allowed.layers.includes(targetLayer)) {
      found.push(`${file} imports ${specifier} (${target}): ${layer} may import only ${allowed.layers.join(', ')}`);
    }
  }
  return found;
}

const sourceFiles = (directory: string): string[] =>
  readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => posix.join(directory, name.split('\\').join('/')))
    .sort();

describe('the layers of lib/', () => {
  const files = [...sourceFiles('lib'), ...sourceFiles('functions')];

  it('reads every file of each layer', () => {
    const layers = new Set(files.map(layerOf));
    expect([...layers].sort()).toEqual(['domain', 'functions', 'http', 'root', 'store']);
  });

  it('has every import of lib/ and functions/ run downward', () => {
    const found = files.flatMap((file) => violations(file, importsOf(readFileSync(file, 'utf8'))));
    expect(found).toEqual([]);
  });

  it('finds the imports of a file, type-only, multi-line, re-exported and dynamic, and not those in comments', () => {
    const source = [
      "import { a } from './a.ts';",
      "import type { B } from '../store/b.ts';",
      'import {',
      '  c,',
      '  type D,',
      "} from '../http/c.ts';",
      "import * as e from 'node:crypto';",
      "import '@aws-sdk/side-effect';",
      "export { f } from './f.ts';",
      "export type * from './g.ts';",
      "const h = await import('../../infra/h.ts');",
      "// import { no } from '../http/commented.ts';",
      "/** import { no } from '../http/documented.ts'; */",
    ].join('\n');
    expect(importsOf(source).sort()).toEqual(
      [
        './a.ts',
        '../store/b.ts',
        '../http/c.ts',
        'node:crypto',
        '@aws-sdk/side-effect',
        './f.ts',
        './g.ts',
        '../../infra/h.ts',
      ].sort(),
    );
  });

  it.each<[string, string[], string[]]>([
    [
      'domain importing store',
      ['../store/table.ts'],
      ['lib/domain/x.ts imports ../store/table.ts (lib/store/table.ts): domain may import only domain'],
    ],
    [
      'domain importing http',
      ['../http/responses.ts'],
      ['lib/domain/x.ts imports ../http/responses.ts (lib/http/responses.ts): domain may import only domain'],
    ],
    [
      'domain importing the composition root',
      ['../service.ts'],
      ['lib/domain/x.ts imports ../service.ts (lib/service.ts): domain may import only domain'],
    ],
    [
      'domain importing the AWS SDK',
      ['@aws-sdk/lib-dynamodb'],
      ['lib/domain/x.ts imports @aws-sdk/lib-dynamodb: domain may import only packages node:'],
    ],
    [
      'domain importing a test helper',
      ['../../test/support/store.ts'],
      ['lib/domain/x.ts imports ../../test/support/store.ts (test/support/store.ts): domain may import only domain'],
    ],
  ])('fails on %s, naming the file and the import', (_case, specifiers, expected) => {
    expect(violations('lib/domain/x.ts', specifiers)).toEqual(expected);
  });

  it.each(['lib/domain/x.ts', 'lib/store/x.ts', 'lib/http/x.ts', 'lib/service.ts', 'functions/x.ts'])(
    'fails on node:async_hooks in %s',
    (file) => {
      expect(violations(file, ['node:async_hooks', 'node:crypto'])).toEqual([
        `${file} imports node:async_hooks: ${FORBIDDEN['node:async_hooks']}`,
      ]);
    },
  );

  it('fails on an upward import from store, http, the composition root or a function', () => {
    expect(
      violations('lib/store/x.ts', ['./table.ts', '../domain/errors.ts', '../http/pipeline.ts', '@middy/core']),
    ).toEqual([
      'lib/store/x.ts imports ../http/pipeline.ts (lib/http/pipeline.ts): store may import only domain, store',
      'lib/store/x.ts imports @middy/core: store may import only packages node:, @aws-sdk/',
    ]);
    expect(violations('lib/http/x.ts', ['../store/deadline.ts', '../service.ts', '../../functions/getPet.ts'])).toEqual(
      [
        'lib/http/x.ts imports ../service.ts (lib/service.ts): http may import only domain, store, http',
        'lib/http/x.ts imports ../../functions/getPet.ts (functions/getPet.ts): http may import only domain, store, http',
      ],
    );
    expect(violations('lib/service.ts', ['./store/dynamo.ts', './http/pipeline.ts'])).toEqual([
      'lib/service.ts imports ./http/pipeline.ts (lib/http/pipeline.ts): root may import only domain, store',
    ]);
    expect(
      violations('functions/x.ts', ['../lib/http/pipeline.ts', '../infra/stack.ts', '../contract/operations.ts']),
    ).toEqual([
      'functions/x.ts imports ../infra/stack.ts (infra/stack.ts): functions may import only domain, store, http, root',
      'functions/x.ts imports ../contract/operations.ts (contract/operations.ts): functions may import only domain, store, http, root',
    ]);
  });

  it('keeps the route prose out of lib/ and functions/, and every file in a layer', () => {
    expect(violations('functions/x.ts', ['../lib/domain/routeDocs.ts'])).toEqual([
      'functions/x.ts imports ../lib/domain/routeDocs.ts: the route prose is for infra/ and contract/ only, never a bundle',
    ]);
    expect(violations('lib/http/x.ts', ['../domain/routeDocs.ts'])).toHaveLength(1);
    expect(violations('lib/util.ts', [])).toEqual([
      'lib/util.ts is in no layer: put it in lib/domain, lib/store or lib/http',
    ]);
    expect(violations('infra/stack.ts', ['../lib/domain/routeDocs.ts'])).toEqual([]);
  });
});
