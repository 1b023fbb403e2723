/**
 * The one set of esbuild options for the Lambda bundles, beside the modules only the bundles take
 * (this folder: credentialProvider.ts, noEventStreams.ts, builtins/). The CDK functions (through
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
 * The bundles' module format: an ES module (`index.mjs`) or CommonJS (`index.js`, as NodejsFunction
 * names it); the Lambda handler is `index.handler` either way. `npm run bench -- --format both`
 * measures one against the other.
 */
export type BundleFormat = 'esm' | 'cjs';
export const BUNDLE_FORMATS: readonly BundleFormat[] = ['esm', 'cjs'];
export const DEPLOYED_FORMAT: BundleFormat = 'esm';
export const BUNDLE_FILES: Readonly<Record<BundleFormat, string>> = { esm: 'index.mjs', cjs: 'index.js' };
export const BUNDLE_FILE = BUNDLE_FILES[DEPLOYED_FORMAT];
export const HANDLER_EXPORT = 'handler';

/**
 * The assembly metadata type under which each function's construct records the source it is bundled
 * from (`entry`): what `start:deployed --watch` rebuilds when that source changes.
 */
export const FUNCTION_ENTRY_METADATA = 'petstore:entry';

/**
 * ESM bundles have no `require`; esbuild's shim for CommonJS dependencies that `require()` a
 * Node built-in calls the global one. The banner defines it (under a name no bundle uses).
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __petstoreCreateRequire } from 'node:module';" +
  'const require = __petstoreCreateRequire(import.meta.url);';

/**
 * The functions' NODE_OPTIONS: none. (`--enable-source-maps` made every cold import about 0.2x
 * slower; stack traces are symbolicated offline instead. Any V8 flag, even `--max-old-space-size`,
 * made loading Node's own built-ins about 3x slower: docs/performance.md.) `npm run bench` imports
 * with these.
 */
export const FUNCTION_NODE_OPTIONS = '';

/**
 * The Node built-ins the bundled code imports, each replaced by a module of ours
 * (`infra/bundle/builtins/`) that takes the built-in from `process.getBuiltinModule` and exports the names
 * imported from it. An ES `import` of a built-in builds its module namespace, which reads every
 * export of the built-in, getters included: `node:http`'s load Node's fetch and WebSocket stack
 * (15-30 ms of a cold start), `node:process`'s build its report and stdio objects (3-5 ms), and
 * the rest cost about 1 ms each, none of which Lambda's runtime has paid before the handler loads
 * (it loads its own built-ins with `require`). `node:fs/promises` is also served over `node:fs`,
 * which the runtime has loaded (infra/bundle/builtins/fsPromises.ts). A name imported from one that its
 * module does not export fails the build; a built-in not listed here fails
 * test/infra/bundleContents.test.ts, which allows no ES import of a built-in in a bundle.
 */
export const builtinAliases: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries({
    crypto: 'crypto.ts',
    fs: 'fs.ts',
    'fs/promises': 'fsPromises.ts',
    http: 'http.ts',
    https: 'https.ts',
    os: 'os.ts',
    path: 'path.ts',
    process: 'process.ts',
    stream: 'stream.ts',
    timers: 'timers.ts',
  }).flatMap(([builtin, file]) => {
    const module = join(BUNDLE_DIR, 'builtins', file);
    return [[`node:${builtin}`, module], [builtin, module]];
  }),
);

/**
 * Packages the bundles leave out, each replaced by a module of ours (absolute paths, so both
 * esbuild runs resolve them alike whatever their working folder): code the service never runs on
 * Lambda, not a different way of doing what it does run.
 * - the SDK's default credential chain (SSO, INI, process, web identity, HTTP, IMDS, and the STS
 *   and SSO clients they use: about 135 kB, 0.4x of the floor) by a provider that reads the
 *   environment only, where Lambda puts the function's credentials;
 * - event-stream support (about 19 kB), which DynamoDB's JSON protocol never loads, by a stub that
 *   throws if it ever were;
 * - the Node built-ins, by modules that build no ES namespace (`builtinAliases`).
 */
export const lambdaAliases: Readonly<Record<string, string>> = {
  '@aws-sdk/credential-provider-node': join(BUNDLE_DIR, 'credentialProvider.ts'),
  '@smithy/core/event-streams': join(BUNDLE_DIR, 'noEventStreams.ts'),
  ...builtinAliases,
};

/**
 * What differs by format: an ES module needs the require banner and the built-ins without ES
 * namespaces (`builtinAliases`); a CommonJS bundle has `require` and builds no namespace.
 */
const FORMAT_SETTINGS: Readonly<Record<BundleFormat, { banner: string; alias: Readonly<Record<string, string>> }>> = {
  esm: { banner: ESM_REQUIRE_BANNER, alias: lambdaAliases },
  cjs: {
    banner: '',
    alias: Object.fromEntries(Object.entries(lambdaAliases).filter(([from]) => !(from in builtinAliases))),
  },
};

/** The shared settings, in esbuild's own terms. */
export const esbuildSettings = {
  platform: 'node',
  format: 'esm',
  target: 'node22',
  minify: true,
  /**
   * Linked source maps (`index.mjs.map`) for `npm run build` only: the deployed zip carries none and
   * NODE_OPTIONS has no `--enable-source-maps` (it cost about 0.2x of the import on every cold start).
   * The build is deterministic, so the maps `npm run build` writes for a commit symbolicate the
   * stack traces of that commit's deployed code offline (see docs/performance.md, Speed and size).
   */
  sourcemap: true,
  /** Stack traces need names and positions only; leaving out the sources halves the map. */
  sourcesContent: false,
  /** Prefer packages' ESM builds (the AWS SDK's `dist-es`): smaller, and tree-shaken. */
  mainFields: ['module', 'main'],
  banner: ESM_REQUIRE_BANNER,
  /**
   * A property read on a namespace import that its module does not export is an error, not a
   * warning: with the built-ins replaced (`builtinAliases`), `import * as fs from 'node:fs'` then
   * `fs.existsSync` would otherwise be `undefined` at run time. (A dynamic `import()` of a built-in
   * is not checked by esbuild; test/infra/bundleContents.test.ts allows none.)
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
    format: OutputFormat.ESM,
    target: esbuildSettings.target,
    minify: esbuildSettings.minify,
    sourceMap: false,
    sourcesContent: esbuildSettings.sourcesContent,
    mainFields: [...esbuildSettings.mainFields],
    banner: esbuildSettings.banner,
    bundleAwsSDK: true,
    externalModules: [...esbuildSettings.external],
    // NodejsFunction has no alias prop; its esbuild CLI takes them as repeated `--alias:from=to`.
    esbuildArgs: {
      '--alias': Object.entries(esbuildSettings.alias).map(([from, to]) => `${from}=${to}`),
      ...Object.fromEntries(Object.entries(esbuildSettings.logOverride).map(([id, level]) => [`--log-override:${id}`, level])),
    },
    logLevel: LogLevel.WARNING,
    forceDockerBundling: false,
  };
}

/** The settings as esbuild JS API options, without entry point or output file. */
export function bundleOptions(format: BundleFormat = DEPLOYED_FORMAT): BuildOptions {
  return {
    bundle: true,
    platform: esbuildSettings.platform,
    format,
    target: esbuildSettings.target,
    minify: esbuildSettings.minify,
    sourcemap: esbuildSettings.sourcemap,
    sourcesContent: esbuildSettings.sourcesContent,
    mainFields: [...esbuildSettings.mainFields],
    banner: { js: FORMAT_SETTINGS[format].banner },
    external: [...esbuildSettings.external],
    alias: { ...FORMAT_SETTINGS[format].alias },
    logLevel: esbuildSettings.logLevel,
    logOverride: { ...esbuildSettings.logOverride },
    absWorkingDir: PROJECT_ROOT,
  };
}

/** The options as deployed: no source map in the zip (see `esbuildSettings.sourcemap`). */
export function deployedBundleOptions(format: BundleFormat = DEPLOYED_FORMAT): BuildOptions {
  return { ...bundleOptions(format), sourcemap: false };
}

/** esbuild's JS API options for one function: `entry` bundled into `outdir/index.mjs` (+ `.map`). */
export function esbuildOptions(entry: string, outdir: string): BuildOptions & { outfile: string } {
  return { ...bundleOptions(), entryPoints: [entry], outfile: join(outdir, BUNDLE_FILE), metafile: true };
}

/**
 * NodejsFunction silently falls back to Docker when it cannot find esbuild; we never want that
 * (no Docker here, and a different esbuild would build a different bundle), so fail instead.
 */
export function assertLocalEsbuild(): void {
  try {
    createRequire(import.meta.url).resolve('esbuild');
  } catch {
    throw new Error('esbuild is not installed locally: run `npm ci`. The functions are never bundled in Docker.');
  }
}
