/**
 * Every function bundled in memory exactly as deployed (infra/bundle/bundling.ts), beside two builds of
 * the floor (tools/bench/floor.ts: one GetCommand through DynamoDBDocumentClient), with esbuild's
 * metafile: what `npm run bench` measures and what the bundle-contents test asserts on. Derived
 * from lib/domain/routes.ts, so a new route or a new import is picked up without a file list here.
 *
 * - `floor`, the default floor: floor.ts bundled as an ES module with the SDK as published (its
 *   whole default credential chain, its ES imports of Node's built-ins). The targets are ratios to
 *   it, and it stays what the budgets were set against, whatever the functions' format.
 * - `lambdaFloor`: the same handler built with the functions' own options (`lambdaAliases`), so
 *   what a function adds beyond it is its own code.
 */
import { build, type BuildOptions } from 'esbuild';
import { join } from 'node:path';
import { BUNDLE_FILE, PROJECT_ROOT, deployedBundleOptions } from '../../infra/bundle/bundling.ts';
import { routes, type OperationName } from '../../lib/domain/routes.ts';

const FLOOR_ENTRY = 'tools/bench/floor.ts';

export type FloorName = 'floor' | 'lambdaFloor';

export const FLOOR_LABELS: Record<FloorName, string> = {
  floor: 'default floor (the SDK as published)',
  lambdaFloor: 'Lambda floor (built as the functions are)',
};

/** The default floor's options: the deployed ones as an ES module, without `lambdaAliases`. */
const defaultFloorOptions = (): BuildOptions => ({ ...deployedBundleOptions(), format: 'esm', alias: {} });

/** The file a bundle is written to: `index.mjs` for an ES module (the default floor), else as deployed. */
export const bundleFileOf = (bundle: Pick<BuiltBundle, 'format'>) =>
  bundle.format === 'esm' ? 'index.mjs' : BUNDLE_FILE;

export interface BuiltBundle {
  name: OperationName | FloorName;
  format: BuildOptions['format'];
  entry: string;
  code: Uint8Array;
  bytes: number;
  /** Bytes in the output per input file, as the metafile gives them. */
  inputs: Record<string, number>;
  /** What the output imports with a static ES `import` (only Node built-ins are left external). */
  esImports: string[];
  /** What the output loads with `require()`. */
  requires: string[];
  /**
   * Each dynamic `import()` left in the output, as `importer -> specifier`: it runs only when
   * reached, and builds the ES namespace of what it imports.
   */
  dynamicImports: string[];
}

async function buildBundle(
  name: BuiltBundle['name'],
  entry: string,
  options: BuildOptions = deployedBundleOptions(),
): Promise<BuiltBundle> {
  const format = options.format;
  const result = await build({
    ...options,
    entryPoints: [join(PROJECT_ROOT, entry)],
    outfile: join(PROJECT_ROOT, 'dist', name, bundleFileOf({ format })),
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const output = result.outputFiles[0];
  const meta = Object.values(result.metafile.outputs)[0];
  if (!output || !meta) throw new Error(`${entry}: esbuild wrote nothing`);
  const inputs = Object.fromEntries(
    Object.entries(meta.inputs).map(([file, { bytesInOutput }]) => [file, bytesInOutput]),
  );
  const loaded = (kind: string) => [
    ...new Set(meta.imports.filter((each) => each.kind === kind).map((each) => each.path)),
  ];
  const dynamicImports = Object.entries(result.metafile.inputs).flatMap(([importer, input]) =>
    input.imports
      .filter((each) => each.kind === 'dynamic-import' && each.external)
      .map((each) => `${importer} -> ${each.original ?? each.path}`),
  );
  return {
    name,
    format,
    entry,
    code: output.contents,
    bytes: output.contents.length,
    inputs,
    esImports: loaded('import-statement'),
    requires: loaded('require-call'),
    dynamicImports,
  };
}

/** Both floors and one bundle per route. */
export interface BundleSet {
  floor: BuiltBundle;
  lambdaFloor: BuiltBundle;
  functions: BuiltBundle[];
}

/** Both floors, then one bundle per route. */
export async function buildAllBundles(): Promise<BundleSet> {
  const [floor, lambdaFloor, ...functions] = await Promise.all([
    buildBundle('floor', FLOOR_ENTRY, defaultFloorOptions()),
    buildBundle('lambdaFloor', FLOOR_ENTRY),
    ...routes.map((route) => buildBundle(route.operation, route.entry)),
  ]);
  return { floor: floor!, lambdaFloor: lambdaFloor!, functions };
}

/** The package an input belongs to (`@middy/core`, `@smithy/core`), or the project file itself. */
export function sourceOf(input: string): string {
  const match = /.*node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
  return match ? match[1]! : input;
}

/** Output bytes per package or project file, largest first. */
function breakdown(bundle: BuiltBundle): [string, number][] {
  const bySource = new Map<string, number>();
  for (const [input, bytes] of Object.entries(bundle.inputs))
    bySource.set(sourceOf(input), (bySource.get(sourceOf(input)) ?? 0) + bytes);
  return [...bySource].sort((a, b) => b[1] - a[1]);
}

/** What a function carries beyond the floor: per source, the bytes it adds (largest first). */
export function beyondFloor(bundle: BuiltBundle, floor: BuiltBundle): [string, number][] {
  const floorBytes = new Map(breakdown(floor));
  return breakdown(bundle)
    .map(([source, bytes]): [string, number] => [source, bytes - (floorBytes.get(source) ?? 0)])
    .filter(([, extra]) => extra > 0)
    .sort((a, b) => b[1] - a[1]);
}
