/**
 * `npm run build`: bundles every route's function into dist/<operation>/index.js (+ index.js.map)
 * with esbuild's JS API and the same options the CDK functions are bundled with (infra/bundle/bundling.ts),
 * then prints each bundle's size.
 */
import '../local/requireNode22.mjs';
import { build } from 'esbuild';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PROJECT_ROOT, esbuildOptions } from '../infra/bundle/bundling.ts';
import { routes } from '../lib/domain/routes.ts';

const DIST = join(PROJECT_ROOT, 'dist');

const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;

const results = await Promise.all(
  routes.map(async (route) => {
    const outdir = join(DIST, route.operation);
    rmSync(outdir, { recursive: true, force: true });
    mkdirSync(outdir, { recursive: true });
    const options = esbuildOptions(join(PROJECT_ROOT, route.entry), outdir);
    const result = await build(options);
    if (result.errors.length > 0) throw new Error(`${route.operation}: esbuild reported errors`);
    return {
      route,
      outfile: options.outfile,
      bytes: statSync(options.outfile).size,
      mapBytes: statSync(`${options.outfile}.map`).size,
    };
  }),
);

const rows = results.map(({ route, outfile, bytes, mapBytes }) => [
  route.operation,
  relative(PROJECT_ROOT, outfile),
  kib(bytes),
  `(source map ${kib(mapBytes)})`,
]);
const total = results.reduce((sum, { bytes }) => sum + bytes, 0);
rows.push(['total', `${results.length} bundles`, kib(total), '']);
const widths = [0, 1, 2].map((i) => Math.max(...rows.map((row) => row[i]!.length)));
for (const [name, file, size, map] of rows) {
  console.log(
    `${name!.padEnd(widths[0]!)}  ${file!.padEnd(widths[1]!)}  ${size!.padStart(widths[2]!)}  ${map}`.trimEnd(),
  );
}
