/**
 * `start:deployed --inspect`: the inspected function's bundle, built as deployed (the app's
 * `bundleOptions`) but with a linked source map and unminified (so the debugger shows the
 * TypeScript and its names), into a runner-only folder (.inspect/<logical id>/ in the app's
 * folder); the cdk.out asset is never touched.
 */
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { StageApp } from './stageApp.ts';

const DEFAULT_INSPECT_PORT = 9229;

export interface InspectTarget {
  /** The function's operation name (`listPets`, `authorizer`), as `functionMatches` takes it. */
  name: string;
  port: number;
}

/** Where the inspectable bundles of `app` are built. */
const inspectBuildRoot = (app: Pick<StageApp, 'root'>): string => join(app.root, '.inspect');

/**
 * Builds the function's inspectable bundle from its `entry` (relative to the app's folder) into
 * `bundleFile`; resolves to its folder (the sandbox's LAMBDA_TASK_ROOT).
 */
export async function buildInspectBundle(
  app: StageApp,
  logicalId: string,
  entry: string,
  bundleFile: string,
): Promise<string> {
  const outdir = join(inspectBuildRoot(app), logicalId);
  rmSync(outdir, { recursive: true, force: true });
  await build({
    ...app.bundleOptions(),
    entryPoints: [join(app.root, entry)],
    outfile: join(outdir, bundleFile),
    sourcemap: 'linked',
    minify: false,
    metafile: false,
  });
  return outdir;
}

/**
 * `--inspect[=<function>[:<port>]]`'s value ('' for a bare `--inspect`, which inspects
 * `defaultFunction`); undefined for a bad one.
 */
export function parseInspectTarget(value: string, defaultFunction: string): InspectTarget | undefined {
  const match = /^([A-Za-z][A-Za-z0-9]*)?(?::(\d{1,5}))?$/.exec(value);
  if (!match) return undefined;
  const port = match[2] === undefined ? DEFAULT_INSPECT_PORT : Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  return { name: match[1] ?? defaultFunction, port };
}
