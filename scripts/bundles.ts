/**
 * Every function bundled in memory exactly as deployed (infra/bundling.ts), beside the floor
 * (bench/floor.ts) built with the same options, with esbuild's metafile: what `npm run bench`
 * measures and what the bundle-contents test asserts on. Derived from lib/routes.ts, so a new
 * route or a new import is picked up without a file list here.
 */
import { build } from 'esbuild';
import { join } from 'node:path';
import { PROJECT_ROOT, deployedBundleOptions } from '../infra/bundling.ts';
import { routes, type OperationName } from '../lib/domain/routes.ts';

export const FLOOR_ENTRY = 'bench/floor.ts';

export interface BuiltBundle {
  name: OperationName | 'floor';
  entry: string;
  code: Uint8Array;
  bytes: number;
  /** Bytes in the output per input file, as the metafile gives them. */
  inputs: Record<string, number>;
}

export async function buildBundle(name: BuiltBundle['name'], entry: string): Promise<BuiltBundle> {
  const result = await build({
    ...deployedBundleOptions(),
    entryPoints: [join(PROJECT_ROOT, entry)],
    outfile: join(PROJECT_ROOT, 'dist', name, 'index.mjs'),
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const output = result.outputFiles[0];
  const meta = Object.values(result.metafile.outputs)[0];
  if (!output || !meta) throw new Error(`${entry}: esbuild wrote nothing`);
  const inputs = Object.fromEntries(Object.entries(meta.inputs).map(([file, { bytesInOutput }]) => [file, bytesInOutput]));
  return { name, entry, code: output.contents, bytes: output.contents.length, inputs };
}

/** The floor first, then one bundle per route. */
export async function buildAllBundles(): Promise<{ floor: BuiltBundle; functions: BuiltBundle[] }> {
  const [floor, ...functions] = await Promise.all([
    buildBundle('floor', FLOOR_ENTRY),
    ...routes.map((route) => buildBundle(route.operation, route.entry)),
  ]);
  return { floor: floor!, functions };
}

/** The package an input belongs to (`@middy/core`, `@smithy/core`), or the project file itself. */
export function sourceOf(input: string): string {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
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
