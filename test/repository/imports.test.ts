/**
 * The import graph of the whole repository: the product (functions/, lib/, infra/) imports no
 * tool, scripts/ are entry points nothing imports, the stage emulator is a package of its own that
 * the local API does not import, and no module reaches itself through its imports.
 */
import { describe, expect, it } from 'vitest';
import { cyclesOf, importGraph } from './imports.ts';

const graph = importGraph();
const edges = [...graph].flatMap(([from, targets]) => targets.map((to) => ({ from, to })));
const inFolder = (path: string, folder: string) => path.startsWith(`${folder}/`);

describe('the import graph', () => {
  it('is read: every module, and the edges between them', () => {
    expect(graph.size).toBeGreaterThan(200);
    expect(edges).toContainEqual({ from: 'scripts/startDeployed.ts', to: 'tools/stage-emulator/src/cli.ts' });
    expect(edges).toContainEqual({ from: 'functions/getPet.ts', to: 'lib/service.ts' });
  });

  it('imports only existing modules', () => {
    expect(edges.filter(({ to }) => !graph.has(to)).map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it('has the product import no tool, no local API, no script and no test', () => {
    const product = ['functions', 'lib', 'infra', 'contract'];
    const outside = ['tools', 'local', 'scripts', 'test'];
    const found = edges.filter(
      ({ from, to }) =>
        product.some((folder) => inFolder(from, folder)) && outside.some((folder) => inFolder(to, folder)),
    );
    expect(found.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it('has nothing import a script', () => {
    expect(edges.filter(({ to }) => inFolder(to, 'scripts')).map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it('has the stage emulator imported only by the scripts that run it and by tests', () => {
    const importers = edges.filter(
      ({ from, to }) => inFolder(to, 'tools/stage-emulator') && !inFolder(from, 'tools/stage-emulator'),
    );
    expect(
      importers
        .filter(({ from }) => !inFolder(from, 'scripts') && !inFolder(from, 'test'))
        .map(({ from, to }) => `${from} -> ${to}`),
    ).toEqual([]);
  });

  it('has no cycle', () => {
    expect(cyclesOf(graph).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('finds a cycle where there is one', () => {
    expect(
      cyclesOf(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
          ['d', ['a']],
        ]),
      ),
    ).toEqual([['a', 'b', 'c', 'a']]);
  });
});
