/**
 * `npm run dev`: the local API (`npm start`, local/server.ts) restarted on every change under
 * functions/ or lib/. The handlers are ES modules Node cannot unload, so a reload is a new server
 * process on the same port; the embedded store persists under `.data/` with the key that reads it,
 * so data and key survive the restart. Each change is built first (esbuild, as the bundles are): a
 * build that fails keeps the old server serving and says its first error in one line; the next good
 * save reloads. A start-up mistake of the first server (the port taken, a bad variable) ends dev with
 * the server's one line and its exit code. Ctrl-C stops both.
 *
 * PETSTORE_SOURCE_ROOT (a test seam; default: the repository) names the folder whose functions/ and
 * lib/ are watched and whose local/server.ts is run, so its handlers are the ones served: a test
 * points it at a copy and edits the copy. The store stays under `.data/` of the working directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { build } from 'esbuild';
import { PROJECT_ROOT } from '../infra/bundle/bundling.ts';
import { routes } from '../lib/domain/routes.ts';
import { firstBuildError } from '@petstore/local-kit/buildError';
import { watchSettled } from '@petstore/local-kit/folderWatch';
import { BUNDLED_SOURCES } from './sources.ts';

/** The server's line once it accepts requests, and the last line of its banner. */
const LISTENING = /^Pet Store API listening on /;
const BANNER_END = /^Docs: /;
/** How the server names this command in its refusals (`PORT=3001 npm run dev`). */
const COMMAND = 'npm run dev';

type Started = { listening: true } | { listening: false; code: number };

class DevServer {
  private child: ChildProcess | undefined;

  constructor(private readonly script: string) {}

  /** Starts the server; resolves once it listens (banner out) or has exited. `quiet` drops the banner. */
  start(quiet: boolean): Promise<Started> {
    const child = spawn(process.execPath, ['--import', 'tsx', this.script], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, PETSTORE_COMMAND: COMMAND },
    });
    this.child = child;
    return new Promise((resolve) => {
      let inBanner = quiet;
      createInterface({ input: child.stdout! }).on('line', (line) => {
        // A server being replaced says only that it stops: not worth a line.
        if (child !== this.child) return;
        if (quiet ? LISTENING.test(line) : BANNER_END.test(line)) resolve({ listening: true });
        if (!inBanner) console.log(line);
        if (BANNER_END.test(line)) inBanner = false;
      });
      child.once('exit', (code) => resolve({ listening: false, code: code ?? 1 }));
    });
  }

  stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }
}

/** The first build error of what the local API loads, in one line; undefined when it builds. */
async function buildProblem(sourceRoot: string): Promise<string | undefined> {
  try {
    await build({
      absWorkingDir: sourceRoot,
      entryPoints: [...routes.map((route) => route.entry), join('local', 'server.ts')],
      bundle: true,
      write: false,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      logLevel: 'silent',
      outdir: 'out',
    });
    return undefined;
  } catch (error) {
    return firstBuildError(error);
  }
}

export async function runDev(): Promise<void> {
  const sourceRoot = resolve(process.env.PETSTORE_SOURCE_ROOT || PROJECT_ROOT);
  const server = new DevServer(join(sourceRoot, 'local', 'server.ts'));
  let stopping = false;

  const reload = async (changed: string) => {
    const started = performance.now();
    const problem = await buildProblem(sourceRoot);
    if (stopping) return;
    if (problem)
      return console.log(`reload: ${changed} changed; the build failed, the old code still runs: ${problem}`);
    await server.stop();
    const outcome = await server.start(true);
    const ms = Math.round(performance.now() - started);
    if (outcome.listening)
      console.log(
        `reload: ${changed} changed; restarted the local API (handlers, same port, data and key kept) in ${ms} ms`,
      );
    else
      console.log(
        `reload: ${changed} changed; the new server stopped (exit code ${outcome.code}, its line above); the next save tries again`,
      );
  };

  const watch = watchSettled(
    BUNDLED_SOURCES.map((folder) => join(sourceRoot, folder)),
    (files) =>
      reload(
        files
          .map((file) => relative(sourceRoot, file))
          .sort()
          .join(', '),
      ),
  );

  const first = await server.start(false);
  if (!first.listening) {
    // The server said why in one line (the port taken, a bad variable); dev ends with its code.
    void watch.close();
    process.exit(first.code || 1);
  }
  console.log(`Watching ${BUNDLED_SOURCES.join('/ and ')}/: a change restarts the handlers.`);

  const stop = () => {
    if (stopping) return;
    stopping = true;
    void watch
      .close()
      .then(() => server.stop())
      .then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
