/**
 * Every function bundled in memory exactly as deployed (infra/bundle/bundling.ts), beside two builds of
 * the floor (tools/bench/floor.ts: one GetCommand through DynamoDBDocumentClient), with esbuild's
 * metafile: what `npm run bench` measures and what the bundle-contents test asserts on. Derived
 * from lib/routes.ts, so a new route or a new import is picked up without a file list here.
 *
 * - `floor`, the default floor: built the usual way, with the SDK as published (its whole default
 *   credential chain). The targets are ratios to it.
 * - `lambdaFloor`: the same handler built with the functions' own options (`lambdaAliases`), so
 *   what a function adds beyond it is its own code.
 */
import { build, type BuildOptions } from 'esbuild';
import { join, relative } from 'node:path';
import { BUNDLE_FILES, DEPLOYED_FORMAT, PROJECT_ROOT, builtinAliases, deployedBundleOptions, type BundleFormat } from '../../infra/bundle/bundling.ts';
import { routes, type OperationName } from '../../lib/domain/routes.ts';

export const FLOOR_ENTRY = 'tools/bench/floor.ts';

export type FloorName = 'floor' | 'lambdaFloor';

export const FLOOR_LABELS: Record<FloorName, string> = {
  floor: 'default floor (the SDK as published)',
  lambdaFloor: 'Lambda floor (built as the functions are)',
};

/** The options the floor is built with "the usual way": the deployed ones without `lambdaAliases`. */
export const defaultFloorOptions = (format: BundleFormat = DEPLOYED_FORMAT): BuildOptions => ({ ...deployedBundleOptions(format), alias: {} });

/** The modules that replace the Node built-ins (`builtinAliases`), as the metafile names them. */
const BUILTIN_MODULES = new Set(Object.values(builtinAliases).map((file) => relative(PROJECT_ROOT, file)));

export interface BuiltBundle {
  name: OperationName | FloorName;
  format: BundleFormat;
  entry: string;
  code: Uint8Array;
  bytes: number;
  /** Bytes in the output per input file, as the metafile gives them. */
  inputs: Record<string, number>;
  /**
   * What the output imports with a static ES `import`, as the metafile gives it (only Node built-ins
   * are left external). A dynamic `import()` is left out: it runs only when reached (the SDK's
   * `node:async_hooks`, for Lambda's multi-concurrency mode).
   */
  esImports: string[];
  /** Each dynamic `import()` of a replaced built-in (`builtinAliases`), as `importer -> specifier`: it gets only the names the bundles use. */
  dynamicBuiltinImports: string[];
}

export async function buildBundle(name: BuiltBundle['name'], entry: string, options: BuildOptions = deployedBundleOptions()): Promise<BuiltBundle> {
  const format = (options.format ?? DEPLOYED_FORMAT) as BundleFormat;
  const result = await build({
    ...options,
    entryPoints: [join(PROJECT_ROOT, entry)],
    outfile: join(PROJECT_ROOT, 'dist', name, BUNDLE_FILES[format]),
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const output = result.outputFiles[0];
  const meta = Object.values(result.metafile.outputs)[0];
  if (!output || !meta) throw new Error(`${entry}: esbuild wrote nothing`);
  const inputs = Object.fromEntries(Object.entries(meta.inputs).map(([file, { bytesInOutput }]) => [file, bytesInOutput]));
  const esImports = meta.imports.filter((each) => each.kind === 'import-statement').map((each) => each.path);
  const dynamicBuiltinImports = Object.entries(result.metafile.inputs).flatMap(([importer, input]) =>
    input.imports.filter((each) => each.kind === 'dynamic-import' && BUILTIN_MODULES.has(each.path)).map((each) => `${importer} -> ${each.original ?? each.path}`),
  );
  return { name, format, entry, code: output.contents, bytes: output.contents.length, inputs, esImports, dynamicBuiltinImports };
}

/** Both floors and one bundle per route, all in one format. */
export interface BundleSet {
  format: BundleFormat;
  floor: BuiltBundle;
  lambdaFloor: BuiltBundle;
  functions: BuiltBundle[];
}

/** Both floors, then one bundle per route, in `format`. */
export async function buildAllBundles(format: BundleFormat = DEPLOYED_FORMAT): Promise<BundleSet> {
  const [floor, lambdaFloor, ...functions] = await Promise.all([
    buildBundle('floor', FLOOR_ENTRY, defaultFloorOptions(format)),
    buildBundle('lambdaFloor', FLOOR_ENTRY, deployedBundleOptions(format)),
    ...routes.map((route) => buildBundle(route.operation, route.entry, deployedBundleOptions(format))),
  ]);
  return { format, floor: floor!, lambdaFloor: lambdaFloor!, functions };
}

/** The package an input belongs to (`@middy/core`, `@smithy/core`), or the project file itself. */
export function sourceOf(input: string): string {
  const match = /.*node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
  return match ? match[1]! : input;
}

/** Output bytes per package or project file, largest first. */
export function breakdown(bundle: BuiltBundle): [string, number][] {
  const bySource = new Map<string, number>();
  for (const [input, bytes] of Object.entries(bundle.inputs)) bySource.set(sourceOf(input), (bySource.get(sourceOf(input)) ?? 0) + bytes);
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
