/**
 * `start:deployed --inspect`: the inspected function's bundle, built as deployed but with a linked
 * source map and unminified (so the debugger shows the TypeScript and its names), into a runner-only
 * folder (.inspect/<logical id>/); the cdk.out asset is never touched.
 */
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT, esbuildOptions } from '../../../infra/bundle/bundling.ts';
import { AUTHORIZER_ENTRY } from '../../../infra/constructs/authorizer.ts';
import { routes } from '../../../lib/domain/routes.ts';

export const INSPECT_BUILD_ROOT = join(PROJECT_ROOT, '.inspect');
export const DEFAULT_INSPECT_PORT = 9229;

export interface InspectTarget {
  /** The function's operation name (`listPets`, `authorizer`), as `functionMatches` takes it. */
  name: string;
  port: number;
}

/** The source each function is bundled from, by the name `functionMatches` takes. */
export function entryOf(name: string): string | undefined {
  if (name.toLowerCase() === 'authorizer') return AUTHORIZER_ENTRY;
  return routes.find((route) => route.operation.toLowerCase() === name.toLowerCase())?.entry;
}

/** Builds the function's inspectable bundle; resolves to its folder (the sandbox's LAMBDA_TASK_ROOT). */
export async function buildInspectBundle(logicalId: string, entry: string): Promise<string> {
  const outdir = join(INSPECT_BUILD_ROOT, logicalId);
  rmSync(outdir, { recursive: true, force: true });
  await build({
    ...esbuildOptions(join(PROJECT_ROOT, entry), outdir),
    sourcemap: 'linked',
    minify: false,
    metafile: false,
  });
  return outdir;
}

/** The first API operation, inspected when `--inspect` names none. */
const DEFAULT_INSPECTED = routes[0]!.operation;

/** `--inspect[=<function>[:<port>]]`'s value ('' for a bare `--inspect`); undefined for a bad one. */
export function parseInspectTarget(value: string): InspectTarget | undefined {
  const match = /^([A-Za-z][A-Za-z0-9]*)?(?::(\d{1,5}))?$/.exec(value);
  if (!match) return undefined;
  const port = match[2] === undefined ? DEFAULT_INSPECT_PORT : Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  return { name: match[1] ?? DEFAULT_INSPECTED, port };
}
