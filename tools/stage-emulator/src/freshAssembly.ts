/**
 * The cloud assembly the deployed runner reads, synthesized first when it is missing, older than
 * what it is made from (the app's `assemblySources`: the CDK app, the functions and the libraries
 * they bundle, the lock file) or without a function's bundle (`cdk ls` leaves it so), so `npm run
 * start:deployed` never serves yesterday's code and never stops for a bundle it can make. Synthesis
 * is the app's own command (`cdk synth`), exactly what `cdk deploy` would upload.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
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

/**
 * Synthesizes into `outdir` unless it is fresh. Concurrent callers (test files run in parallel)
 * take turns through a lock folder, so only one of them synthesizes.
 */
export async function ensureCloudAssembly(
  outdir: string,
  app: Pick<StageApp, 'root' | 'assemblySources' | 'synthesize'>,
  { quiet = false }: { quiet?: boolean } = {},
): Promise<'fresh' | 'synthesized'> {
  const target = resolve(outdir);
  if (isFresh(target, app)) return 'fresh';
  const lock = `${target}.lock`;
  await acquire(lock, quiet);
  try {
    if (isFresh(target, app)) return 'fresh';
    if (!quiet)
      console.error(
        `Synthesizing ${target} (it is missing, older than the sources, or without a function's bundle)...`,
      );
    const [program, ...args] = app.synthesize;
    // Offline: no CLI telemetry sent (it would reach AWS's endpoints).
    const result = spawnSync(program!, [...args, '--output', target], {
      cwd: app.root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true' },
    });
    if (result.status !== 0) {
      const detail = `${result.stderr ?? ''}`
        .split('\n')
        .filter((line) => line.trim() && !/npm warn/.test(line))
        .slice(-3)
        .join(' / ');
      throw new SynthesisError(
        `${[basename(program!), ...args.slice(0, 1)].join(' ')} failed${result.error ? `: ${result.error.message}` : ''}${detail ? `: ${detail}` : ''}`,
      );
    }
    return 'synthesized';
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * The lock is a folder holding the pid of the process that synthesizes. A lock whose process is
 * gone (killed mid-synthesis, Ctrl-C) is taken over at once; a live one is waited for, and said so.
 */
async function acquire(lock: string, quiet: boolean): Promise<void> {
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
      if (!quiet && !told) console.error(`Waiting for the synthesis another process is running (${lock})...`);
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
