/**
 * The cloud assembly the deployed runner reads, synthesized first when it is missing, older than
 * what it is made from (the app's `assemblySources`: the CDK app, the functions and the libraries
 * they bundle, the lock file) or without a function's bundle (`cdk ls` leaves it so), so `npm run
 * start:deployed` never serves yesterday's code and never stops for a bundle it can make. Synthesis
 * is the app's own command (`cdk synth`), exactly what `cdk deploy` would upload; its progress is said
 * as it goes (a line per function bundled, and one every few seconds while the CLI is silent).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { hasEveryBundle } from './cloudAssembly.ts';
import type { StageApp } from './stageApp.ts';

export class SynthesisError extends Error {}

type AppSources = Pick<StageApp, 'root' | 'assemblySources'>;

/** The newest modification time among the app's sources, in milliseconds. */
function newestSource({ root, assemblySources }: AppSources): number {
  let newest = 0;
  const visit = (path: string): void => {
    if (!existsSync(path)) return;
    const stat = statSync(path);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
    else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const source of assemblySources) visit(join(root, source));
  return newest;
}

/** Whether `outdir` holds an assembly at least as new as every source, every function bundled. */
export function isFresh(outdir: string, app: AppSources): boolean {
  const manifest = join(outdir, 'manifest.json');
  return existsSync(manifest) && statSync(manifest).mtimeMs >= newestSource(app) && hasEveryBundle(outdir);
}

/** How a synthesis is told: its lines (default stderr) and how often a silent one says it is still running. */
export interface SynthesisReport {
  /** Nothing said (the tests' runs). */
  quiet?: boolean;
  /** Where its lines go; stderr by default. */
  report?: (line: string) => void;
  /** A line at most this long apart while the CDK app says nothing (default 5 s). */
  heartbeatMs?: number;
}

/**
 * Synthesizes into `outdir` unless it is fresh. Concurrent callers (test files run in parallel)
 * take turns through a lock folder, so only one of them synthesizes.
 */
export async function ensureCloudAssembly(
  outdir: string,
  app: Pick<StageApp, 'root' | 'assemblySources' | 'synthesize'>,
  { quiet = false, report = (line) => console.error(line), heartbeatMs = 5_000 }: SynthesisReport = {},
): Promise<'fresh' | 'synthesized'> {
  const target = resolve(outdir);
  if (isFresh(target, app)) return 'fresh';
  const say = quiet ? () => {} : report;
  const lock = `${target}.lock`;
  await acquire(lock, say);
  try {
    if (isFresh(target, app)) return 'fresh';
    say(`Synthesizing ${target} (it is missing, older than the sources, or without a function's bundle)...`);
    await synthesize(app, target, say, heartbeatMs);
    return 'synthesized';
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** The CDK's `Bundling asset <stack>/<path>/Code/Stage...` line: the function it bundles. */
const BUNDLING = /^Bundling asset (\S+?)(?:\/Code\/Stage)?\.\.\.$/;

/**
 * The app's synthesis command, its output condensed as it comes: a line per function bundled, and
 * one every `heartbeatMs` of silence naming the time so far and the last step (a synthesis takes
 * 15 s on an idle machine, minutes on a busy one, most of it without a word from the CLI).
 */
function synthesize(
  app: Pick<StageApp, 'root' | 'synthesize'>,
  target: string,
  say: (line: string) => void,
  heartbeatMs: number,
): Promise<void> {
  const [program, ...args] = app.synthesize;
  const started = performance.now();
  const seconds = () => Math.round((performance.now() - started) / 1000);
  let step = 'starting the CDK app';
  // Every line said puts the next heartbeat off by a full period.
  const tell = (line: string) => {
    heartbeat.refresh();
    say(`  synth: ${line}`);
  };
  // Offline: no CLI telemetry sent (it would reach AWS's endpoints).
  const child = spawn(program!, [...args, '--output', target], {
    cwd: app.root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true' },
  });
  const heartbeat = setInterval(() => tell(`${seconds()} s so far (last: ${step})`), heartbeatMs);
  const errors: string[] = [];
  const onLine = (line: string, fromStderr: boolean) => {
    const text = line.trim();
    const bundling = BUNDLING.exec(text);
    if (bundling) {
      step = `bundling ${bundling[1]}`;
      tell(`${step} (${seconds()} s)`);
    } else if (fromStderr && text && !/npm warn/.test(text)) errors.push(text);
  };
  createInterface({ input: child.stdout }).on('line', (line) => onLine(line, false));
  createInterface({ input: child.stderr }).on('line', (line) => onLine(line, true));
  return new Promise((resolvePromise, reject) => {
    let spawnError: Error | undefined;
    child.once('error', (error) => {
      spawnError = error;
    });
    child.once('close', (status) => {
      clearInterval(heartbeat);
      if (status === 0 && !spawnError) {
        say(`  synth: done in ${seconds()} s`);
        return resolvePromise();
      }
      const detail = errors.slice(-3).join(' / ');
      reject(
        new SynthesisError(
          `${[basename(program!), ...args.slice(0, 1)].join(' ')} failed${spawnError ? `: ${spawnError.message}` : ''}${detail ? `: ${detail}` : ''}`,
        ),
      );
    });
  });
}

/**
 * The lock is a folder holding the pid of the process that synthesizes. A lock whose process is
 * gone (killed mid-synthesis, Ctrl-C) is taken over at once; a live one is waited for, and said so.
 */
async function acquire(lock: string, say: (line: string) => void): Promise<void> {
  let told = false;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(join(lock, 'pid'), { encoding: 'utf8', flag: 'a+' }));
      if (holder > 0 && !isAlive(holder)) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (!told) say(`Waiting for the synthesis another process is running (${lock})...`);
      told = true;
      await sleep(200);
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
