/**
 * `npm run start:deployed -- --watch`: keeps a running stage on the code being edited. A change in
 * the app's `bundledSources` (functions/, lib/) rebuilds only the bundles whose esbuild metafile
 * lists the changed file, with the functions' own options (the app's `bundleOptions`), into a
 * runner-only folder (never cdk.out, whose assets are what a deploy uploads), and points each
 * rebuilt function's host at it: new requests start sandboxes on the new code, requests in flight
 * finish on the old. A change in its `infraSource` (infra/) re-synthesizes and restarts the stage
 * (its in-memory store starts empty again). One line per reload.
 */
import { context, type BuildContext, type BuildOptions } from 'esbuild';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { performance } from 'node:perf_hooks';
import { firstBuildError } from '@petstore/local-kit/buildError';
import { watchSettled } from '@petstore/local-kit/folderWatch';
import { functionEntries, handlerFile } from './cloudAssembly.ts';
import type { DeployedApi, DeployedFunction } from './deployedApi.ts';
import type { StageApp } from './stageApp.ts';

export interface StageWatchOptions {
  /** The app: its folders, how its bundles are built and where its functions' entries are recorded. */
  app: StageApp;
  /** Starts the stage; called again, after `resynthesize`, when the app's `infraSource` changes. */
  start(): Promise<DeployedApi>;
  resynthesize(): Promise<unknown>;
  /**
   * Where the bundled sources are read and watched (default: the app's folder). A test seam: tests
   * point it at a copy, so the file they edit is never the repository's.
   */
  sourceRoot?: string;
  /**
   * The folder whose changes re-synthesize and restart the stage (default: the app's `infraSource`,
   * watched only when `sourceRoot` is the app's folder: the assembly is synthesized from it). A test
   * seam: tests point it at a folder of their own, with `resynthesize` and `start` their own too.
   */
  infraDir?: string;
  /** The runner-only folder the rebuilt bundles go to (default `.watch/` in the app's folder). */
  runnerDir?: string;
  /** One line per reload (default: stdout). */
  report?(line: string): void;
}

export interface StageWatch {
  /** The stage now running (a new one after a re-synthesis). */
  readonly api: DeployedApi;
  /** Reloads finished so far. */
  readonly reloads: number;
  close(): Promise<void>;
}

/** One function's incremental build: its entry, its current inputs, and the next output folder. */
interface FunctionBuild {
  deployed: DeployedFunction;
  entry: string;
  /** The file the function's handler is loaded from (`index.js`). */
  bundleFile: string;
  /** esbuild's working folder, which the metafile's inputs are relative to. */
  workingDir: string;
  context: BuildContext<BuildOptions & { write: false; metafile: true }>;
  inputs: Set<string>;
  generation: number;
}

export async function watchDeployedStage(options: StageWatchOptions): Promise<StageWatch> {
  const { app } = options;
  const appRoot = resolve(app.root);
  const sourceRoot = resolve(options.sourceRoot ?? appRoot);
  const runnerDir = resolve(options.runnerDir ?? join(appRoot, '.watch'));
  const report = options.report ?? ((line: string) => console.log(line));
  const infraDir = options.infraDir
    ? resolve(options.infraDir)
    : sourceRoot === appRoot
      ? join(appRoot, app.infraSource)
      : undefined;
  let api = await options.start();
  let builds: FunctionBuild[];
  try {
    rmSync(join(runnerDir, api.stack.stackName), { recursive: true, force: true });
    builds = await prepareBuilds(api, app, sourceRoot, runnerDir);
  } catch (error) {
    await api.close();
    throw error;
  }
  let reloads = 0;

  const reload = async (changed: string[]): Promise<void> => {
    const started = performance.now();
    const shown = changed
      .map((file) => relative(file.startsWith(sourceRoot + sep) ? sourceRoot : appRoot, file))
      .join(', ');
    const elapsed = () => `${Math.round(performance.now() - started)} ms`;
    if (infraDir && changed.some((file) => file.startsWith(infraDir + sep))) {
      await disposeAll(builds);
      await api.close();
      await options.resynthesize();
      api = await options.start();
      builds = await prepareBuilds(api, app, sourceRoot, runnerDir);
      report(
        `reload: ${shown} changed; re-synthesized and restarted ${api.stack.stackName} on ${api.url} in ${elapsed()} (its store starts empty)`,
      );
      return;
    }
    const affected = builds.filter((build) => changed.some((file) => build.inputs.has(file)));
    if (affected.length === 0)
      return report(`reload: ${shown} changed; no function bundles it, nothing rebuilt (${elapsed()})`);
    try {
      const folders = await Promise.all(affected.map((build) => rebuild(build, runnerDir, api.stack.stackName)));
      await Promise.all(affected.map((build, i) => build.deployed.host.replaceCode(folders[i]!)));
    } catch (error) {
      return report(
        `reload: ${shown} changed; the build failed, the old code still runs (${elapsed()}): ${firstBuildError(error)}`,
      );
    }
    report(
      `reload: ${shown} changed; rebuilt ${affected.map((build) => build.deployed.functionName).join(', ')} in ${elapsed()}`,
    );
  };

  const watchers = watchSettled(
    [...app.bundledSources.map((folder) => join(sourceRoot, folder)), ...(infraDir ? [infraDir] : [])],
    (changed) =>
      reload(changed).then(
        () => {
          reloads += 1;
        },
        (error: unknown) => report(`reload failed: ${firstLine(error)}`),
      ),
  );

  return {
    get api() {
      return api;
    },
    get reloads() {
      return reloads;
    },
    async close() {
      await watchers.close();
      await disposeAll(builds);
      await api.close();
    },
  };
}

async function prepareBuilds(
  api: DeployedApi,
  app: StageApp,
  sourceRoot: string,
  runnerDir: string,
): Promise<FunctionBuild[]> {
  const entries = functionEntries(api.stack, app.entryMetadata);
  const options = app.bundleOptions();
  // esbuild names the metafile's inputs relative to its working folder.
  const workingDir = resolve(options.absWorkingDir ?? process.cwd());
  const builds = await Promise.all(
    api.functions.map(async (deployed): Promise<FunctionBuild | undefined> => {
      const entry = entries.get(deployed.logicalId);
      if (!entry) return undefined;
      const bundleFile = handlerFile(String(api.stack.template.Resources[deployed.logicalId]?.Properties?.Handler));
      const buildContext = await context({
        ...options,
        entryPoints: [join(sourceRoot, entry)],
        // Named for esbuild's metafile only: the output is written by rebuild() into a fresh folder.
        outfile: join(runnerDir, api.stack.stackName, deployed.functionName, bundleFile),
        write: false,
        metafile: true,
        logLevel: 'silent',
      });
      const build: FunctionBuild = {
        deployed,
        entry,
        bundleFile,
        workingDir,
        context: buildContext,
        inputs: new Set(),
        generation: 0,
      };
      // A first build only to learn the inputs: the stage keeps serving cdk.out's assets until a change.
      await buildOutput(build);
      return build;
    }),
  );
  return builds.filter((build): build is FunctionBuild => build !== undefined);
}

async function buildOutput(build: FunctionBuild): Promise<Uint8Array> {
  const result = await build.context.rebuild();
  build.inputs = new Set(Object.keys(result.metafile.inputs).map((input) => resolve(build.workingDir, input)));
  const output = result.outputFiles.find((file) => file.path.endsWith(build.bundleFile));
  if (!output) throw new Error(`${build.entry}: esbuild wrote no ${build.bundleFile}`);
  return output.contents;
}

/** Rebuilds into a new folder (the old one stays for the sandboxes still on it); returns the folder. */
async function rebuild(build: FunctionBuild, runnerDir: string, stackName: string): Promise<string> {
  const code = await buildOutput(build);
  build.generation += 1;
  const folder = join(runnerDir, stackName, build.deployed.functionName, String(build.generation));
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, build.bundleFile), code);
  return folder;
}

async function disposeAll(builds: FunctionBuild[]): Promise<void> {
  await Promise.all(builds.map((build) => build.context.dispose()));
}

const firstLine = (error: unknown): string =>
  String(error instanceof Error ? error.message : error).split('\n')[0] ?? '';
