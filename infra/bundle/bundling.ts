/**
 * The one set of esbuild options for the Lambda bundles, beside the modules only the bundles take
 * (this folder: credentialProvider.ts, noEventStreams.ts). The CDK functions (through
 * NodejsFunction's local esbuild bundling) and `npm run build` and `npm run bench` (through
 * esbuild's JS API) all read them from here, so what `cdk synth` deploys and what `dist/` holds
 * are built alike. Only the bundles take `lambdaAliases`: `npm start`, `npm run invoke`, the
 * scripts and the tests run the TypeScript sources, with the SDK as published.
 */
import type { BuildOptions } from 'esbuild';
import { LogLevel, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: every route's `entry` is relative to it, and so is package-lock.json. */
export const PROJECT_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const DEPS_LOCK_FILE = join(PROJECT_ROOT, 'package-lock.json');
/** This folder: the modules the bundles take in place of packages they leave out. */
const BUNDLE_DIR = join(PROJECT_ROOT, 'infra', 'bundle');

/**
 * CommonJS, as NodejsFunction writes it: `index.js`, loaded by Lambda's runtime with `require`
 * (no package.json says otherwise), the handler `index.handler`. A CommonJS bundle takes each Node
 * built-in with `require`, which builds no ES module namespace (an ES `import` of `node:http` builds
 * one, loading Node's fetch and WebSocket stack); as an ES module the bundles needed a module of
 * their own per built-in for that. Why CommonJS: docs/performance.md, "The bundle format".
 */
export const BUNDLE_FILE = 'index.js';
export const HANDLER_EXPORT = 'handler';

/**
 * The assembly metadata type under which each function's construct records the source it is bundled
 * from (`entry`): what `start:deployed --watch` rebuilds when that source changes.
 */
export const FUNCTION_ENTRY_METADATA = 'petstore:entry';

/**
 * The functions' NODE_OPTIONS: none. (`--enable-source-maps` made every cold import about 0.2x
 * slower; stack traces are symbolicated offline instead. Any V8 flag, even `--max-old-space-size`,
 * made loading Node's own built-ins about 3x slower: docs/performance.md.) `npm run bench` imports
 * with these.
 */
export const FUNCTION_NODE_OPTIONS = '';

/**
 * Packages the bundles leave out, each replaced by a module of ours (absolute paths, so both
 * esbuild runs resolve them alike whatever their working folder): code the service never runs on
 * Lambda, not a different way of doing what it does run.
 * - the SDK's default credential chain (SSO, INI, process, web identity, HTTP, IMDS, and the STS
 *   and SSO clients they use: about 139 kB, 0.4x of the floor) by a provider that reads the
 *   environment only, where Lambda puts the function's credentials;
 * - event-stream support (about 19 kB), which DynamoDB's JSON protocol never loads, by a stub that
 *   throws if it ever were.
 */
export const lambdaAliases: Readonly<Record<string, string>> = {
  '@aws-sdk/credential-provider-node': join(BUNDLE_DIR, 'credentialProvider.ts'),
  '@smithy/core/event-streams': join(BUNDLE_DIR, 'noEventStreams.ts'),
};

/** The shared settings, in esbuild's own terms. */
const esbuildSettings = {
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  minify: true,
  /**
   * Linked source maps (`index.js.map`) for `npm run build` only: the deployed zip carries none and
   * NODE_OPTIONS has no `--enable-source-maps` (it cost about 0.2x of the import on every cold start).
   * The build is deterministic, so the maps `npm run build` writes for a commit symbolicate the
   * stack traces of that commit's deployed code offline (see docs/performance.md, Speed and size).
   */
  sourcemap: true,
  /** Stack traces need names and positions only; leaving out the sources halves the map. */
  sourcesContent: false,
  /** Prefer packages' ESM builds (the AWS SDK's `dist-es`): smaller, and tree-shaken (esbuild writes them as CommonJS). */
  mainFields: ['module', 'main'],
  /**
   * A name imported from a module that does not export it is an error, not a warning: with packages
   * replaced (`lambdaAliases`), a name the SDK imports that our module lacks would otherwise be
   * `undefined` at run time.
   */
  logOverride: { 'import-is-undefined': 'error' } as Record<string, 'error'>,
  /** Nothing is external: AWS SDK v3 is bundled, so the version we test is the version we run. */
  external: [] as string[],
  alias: lambdaAliases,
  logLevel: 'warning',
} as const;

/** NodejsFunction's `bundling` props: the settings above, always bundled by the local esbuild. */
export function lambdaBundling(): BundlingOptions {
  assertLocalEsbuild();
  return {
    format: OutputFormat.CJS,
    target: esbuildSettings.target,
    minify: esbuildSettings.minify,
    sourceMap: false,
    sourcesContent: esbuildSettings.sourcesContent,
    mainFields: [...esbuildSettings.mainFields],
    bundleAwsSDK: true,
    externalModules: [...esbuildSettings.external],
    // NodejsFunction has no alias prop; its esbuild CLI takes them as repeated `--alias:from=to`.
    esbuildArgs: {
      '--alias': Object.entries(esbuildSettings.alias).map(([from, to]) => `${from}=${to}`),
      ...Object.fromEntries(
        Object.entries(esbuildSettings.logOverride).map(([id, level]) => [`--log-override:${id}`, level]),
      ),
    },
    logLevel: LogLevel.WARNING,
    forceDockerBundling: false,
  };
}

/** The settings as esbuild JS API options, without entry point or output file. */
function bundleOptions(): BuildOptions {
  return {
    bundle: true,
    platform: esbuildSettings.platform,
    format: esbuildSettings.format,
    target: esbuildSettings.target,
    minify: esbuildSettings.minify,
    sourcemap: esbuildSettings.sourcemap,
    sourcesContent: esbuildSettings.sourcesContent,
    mainFields: [...esbuildSettings.mainFields],
    external: [...esbuildSettings.external],
    alias: { ...esbuildSettings.alias },
    logLevel: esbuildSettings.logLevel,
    logOverride: { ...esbuildSettings.logOverride },
    absWorkingDir: PROJECT_ROOT,
  };
}

/** The options as deployed: no source map in the zip (see `esbuildSettings.sourcemap`). */
export function deployedBundleOptions(): BuildOptions {
  return { ...bundleOptions(), sourcemap: false };
}

/** esbuild's JS API options for one function: `entry` bundled into index.js in `outdir` (+ its `.map`). */
export function esbuildOptions(entry: string, outdir: string): BuildOptions & { outfile: string } {
  return { ...bundleOptions(), entryPoints: [entry], outfile: join(outdir, BUNDLE_FILE), metafile: true };
}

/**
 * NodejsFunction silently falls back to Docker when it cannot find esbuild; we never want that
 * (no Docker here, and a different esbuild would build a different bundle), so fail instead.
 */
function assertLocalEsbuild(): void {
  try {
    createRequire(import.meta.url).resolve('esbuild');
  } catch {
    throw new Error('esbuild is not installed locally: run `npm ci`. The functions are never bundled in Docker.');
  }
}
