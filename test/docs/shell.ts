/**
 * A newcomer's shell for the documented blocks run as written (walkthrough.test.ts, bench.test.ts):
 * each block's text through bash from the repository root, in its own process group, with none of
 * the suite's own settings in its environment.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { MARK, ROOT, documentedBlocks, type ShellBlock } from './shellBlocks.ts';

/** The environment a newcomer's shell has: none of the suite's own settings. */
export function newcomerEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(PETSTORE_|AWS_|DYNAMODB_|STORE_|VITEST|NODE_OPTIONS$|TEST$|PORT$)/.test(name),
    ),
  );
  return { ...env, ...extra };
}

/** A command run through bash in its own process group, its output kept. */
export class Shell {
  readonly child: ChildProcess;
  output = '';
  readonly exited: Promise<number | null>;

  constructor(
    readonly script: string,
    env: NodeJS.ProcessEnv,
  ) {
    this.child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: ROOT,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
    this.child.stderr!.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  /** Resolves with the first match of `pattern` in the output; rejects if the command ends or the time passes first. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    const { stdout, stderr } = this.child;
    return new Promise((resolve, reject) => {
      const settle = (error?: Error) => {
        clearTimeout(timer);
        stdout!.off('data', check);
        stderr!.off('data', check);
        this.child.off('close', ended);
        if (error) reject(error);
      };
      // Reads the output after the constructor's listeners have added the chunk to it.
      const check = () => {
        const match = this.output.match(pattern);
        if (!match) return;
        settle();
        resolve(match);
      };
      const ended = () => settle(new Error(`"${this.script}" ended before printing ${pattern}:\n${this.output}`));
      // A safety timeout: fails the wait when the line never comes.
      const timer = setTimeout(
        () => settle(new Error(`"${this.script}" printed no ${pattern} in ${timeoutMs} ms:\n${this.output}`)),
        timeoutMs,
      );
      stdout!.on('data', check);
      stderr!.on('data', check);
      this.child.once('close', ended);
      check();
    });
  }

  /**
   * SIGTERM to the command (bash runs a lone command in its own place: npm), as a process manager
   * sends it; npm passes it on to what it started (test/local/signals.test.ts). The exit code; the
   * whole process group is killed if it has not stopped within 10 s.
   */
  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) process.kill(this.child.pid!, 'SIGTERM');
    // A safety timeout around the exit.
    const stopped = await Promise.race([
      this.exited,
      new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 10_000).unref()),
    ]);
    if (stopped === 'late') {
      process.kill(-this.child.pid!, 'SIGKILL');
      throw new Error(`"${this.script}" did not stop within 10 s of SIGTERM`);
    }
    return stopped;
  }
}

const running = new Set<Shell>();
export function start(script: string, env: NodeJS.ProcessEnv): Shell {
  const shell = new Shell(script, env);
  running.add(shell);
  return shell;
}
export async function runToEnd(
  script: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; output: string }> {
  const shell = start(script, env);
  return { code: await shell.exited, output: shell.output };
}

/** Stops whatever a test left running (after each test of runMarkedBlocks). */
async function stopAll(): Promise<void> {
  for (const shell of running) await shell.stop().catch(() => undefined);
  running.clear();
}

/** `text` with each placeholder replaced, failing when one is not in it (the docs changed under the test). */
export function fill(text: string, values: Record<string, string>): string {
  let filled = text;
  for (const [placeholder, value] of Object.entries(values)) {
    expect(filled, `the block no longer holds ${placeholder}`).toContain(placeholder);
    filled = filled.split(placeholder).join(value);
  }
  return filled;
}

type BlockRunner = (block: ShellBlock) => Promise<void>;

/**
 * Runs, each as a test, the documented blocks marked `<!-- run as written by: <test> -->` with the
 * runner `runnerFor` finds, stopping what each left running; fails when fewer than `minimum` are
 * marked, or a marked block has no runner.
 */
export function runMarkedBlocks(
  test: string,
  title: string,
  minimum: number,
  runnerFor: (block: ShellBlock) => BlockRunner | undefined,
): void {
  const marked = documentedBlocks().filter((block) => {
    const mark = MARK.exec(block.mark ?? '');
    return mark?.[1] === 'run as written by' && mark[2] === test;
  });
  afterEach(stopAll);
  describe(title, () => {
    it('finds the blocks marked to run here', () => {
      expect(marked.length).toBeGreaterThanOrEqual(minimum);
    });

    it.each(marked.map((block) => [block.where, block] as const))(
      '%s',
      async (_where, block) => {
        const runner = runnerFor(block);
        expect(
          runner,
          `${block.where}: no runner in ${test} for a block starting "${block.commands[0]}"`,
        ).toBeDefined();
        await runner!(block);
      },
      240_000,
    );
  });
}
