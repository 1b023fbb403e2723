/**
 * The documented blocks marked `<!-- run as written by: test/docs/walkthrough.test.ts -->`, run as a
 * newcomer runs them: each block's text through bash from the repository root, long-running
 * commands started, probed over HTTP and stopped with SIGTERM, and every placeholder (`<printed>`,
 * `<the key npm start printed>`, `psk_...`, the default ports) filled from what an earlier command
 * printed. Every marked block must have a runner here, or the suite fails.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureCloudAssembly } from '../../tools/stage-emulator/src/freshAssembly.ts';
import { MARK, ROOT, documentedBlocks, type ShellBlock } from './shellBlocks.ts';
import { API_KEY_FILE } from '../support/keys.ts';
import { DEFAULT_OUTDIR, STAGE_APP } from '../../local/stageApp.ts';

const WALKTHROUGH = 'test/docs/walkthrough.test.ts';

/** The environment a newcomer's shell has: none of the suite's own settings. */
function newcomerEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(PETSTORE_|AWS_|DYNAMODB_|STORE_|VITEST|NODE_OPTIONS$|TEST$|PORT$)/.test(name),
    ),
  );
  return { ...env, ...extra };
}

/** A command run through bash in its own process group, its output kept. */
class Shell {
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
function start(script: string, env: NodeJS.ProcessEnv): Shell {
  const shell = new Shell(script, env);
  running.add(shell);
  return shell;
}
async function runToEnd(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const shell = start(script, env);
  return { code: await shell.exited, output: shell.output };
}

afterEach(async () => {
  for (const shell of running) await shell.stop().catch(() => undefined);
  running.clear();
});

/** `text` with each placeholder replaced, failing when one is not in it (the docs changed under the test). */
function fill(text: string, values: Record<string, string>): string {
  let filled = text;
  for (const [placeholder, value] of Object.entries(values)) {
    expect(filled, `the block no longer holds ${placeholder}`).toContain(placeholder);
    filled = filled.split(placeholder).join(value);
  }
  return filled;
}

/** Starts `npm run start:deployed` as the block writes it, on the port the OS gives; its URL and what it printed. */
async function startDeployed(command: string): Promise<{ shell: Shell; url: string; table: string; endpoint: string }> {
  expect(command).toMatch(/^npm run start:deployed -- --stage staging\b/);
  const shell = start(`${command} --port 0`, newcomerEnvironment());
  const [, url] = await shell.waitFor(/as deployed, offline, on (http:\/\/\S+\/v1)/, 120_000);
  const [, table, endpoint] = await shell.waitFor(
    /npm run keys -- create --stage staging --table (\S+) --endpoint (\S+)/,
    5_000,
  );
  return { shell, url: url!, table: table!, endpoint: endpoint! };
}

/** What the walkthrough does with each marked block, keyed by the block's first command. */
const RUNNERS: Record<string, (block: ShellBlock) => Promise<void>> = {
  // README: the API in one screen, against `npm start` (in memory, on the port the OS gives: PORT=0).
  'BASE=http://127.0.0.1:3000/v1 KEY=<the key npm start printed>': async (block) => {
    const server = start('npm start', newcomerEnvironment({ PORT: '0', PETSTORE_IN_MEMORY: '1' }));
    const [, key] = await server.waitFor(/generated API key for this run: (\S+)/, 60_000);
    const [, port] = await server.waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)\/v1/, 5_000);
    const script = fill(block.body, {
      'http://127.0.0.1:3000/v1': `http://127.0.0.1:${port}/v1`,
      '<the key npm start printed>': key!,
    });
    const { code, output } = await runToEnd(script, newcomerEnvironment());
    expect(code, output).toBe(0);
    // createPet 201, listPets 200 with the pet just created, getPet of an id nobody created 404.
    // Not anchored: curl's progress meter, on stderr, may share a line with a status line.
    expect(
      [...output.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1])),
      output,
    ).toEqual([201, 200, 404]);
    expect(output).toContain('"name":"Rex"');
    expect(await server.stop()).toBe(0);
  },
  // README: the rehearsal's one line, started, probed and stopped.
  'npm run start:deployed -- --stage staging': async (block) => {
    expect(block.commands).toHaveLength(1);
    const { shell, url } = await startDeployed(block.commands[0]!);
    const answer = await fetch(`${url}/pets`);
    expect(answer.status).toBe(401);
    expect(await answer.json()).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    expect(await shell.stop()).toBe(0);
  },
  // docs/performance.md: the quick benchmark (the full run is the same code with more samples).
  'npm run bench -- --quick': async (block) => {
    expect(block.commands).toEqual(['npm run bench -- --quick']);
    const results = join(ROOT, 'tools', 'bench', 'results.json');
    const kept = `${results}.walkthrough`;
    if (existsSync(results)) copyFileSync(results, kept);
    const started = new Date();
    try {
      const { code, output } = await runToEnd(block.body, newcomerEnvironment());
      expect(code, output).toBe(0);
      expect(output).toContain('Targets (against the default floor):');
      const written = JSON.parse(readFileSync(results, 'utf8')) as { date: string; quick: boolean; bundles: unknown[] };
      expect(new Date(written.date).getTime()).toBeGreaterThanOrEqual(started.getTime() - 1_000);
      expect(written.quick).toBe(true);
      expect(written.bundles.length).toBeGreaterThan(0);
    } finally {
      if (existsSync(kept)) {
        copyFileSync(kept, results);
        rmSync(kept);
      }
    }
  },
  // docs/performance.md: the cold request with Lambda's node arguments, on one CPU.
  'npm run bench -- --quick --cold-only --lambda-node-args --one-core': async (block) => {
    expect(block.commands).toEqual(['npm run bench -- --quick --cold-only --lambda-node-args --one-core']);
    const results = join(ROOT, 'tools', 'bench', 'results.json');
    const kept = `${results}.walkthrough`;
    if (existsSync(results)) copyFileSync(results, kept);
    try {
      const { code, output } = await runToEnd(block.body, newcomerEnvironment());
      expect(code, output).toBe(0);
      expect(output).toMatch(
        /^Timed processes: node --expose-gc --max-http-header-size 81920 --max-semi-space-size=25 --max-old-space-size=461 \(Lambda's runtime, 512 MiB\), confined to CPU \d+\.$/m,
      );
      expect(output).toContain('Cold request targets:');
      const written = JSON.parse(readFileSync(results, 'utf8')) as {
        launch: { nodeArgs: string[]; cpu?: number };
        coldRequest: { rows: unknown[] };
        warm: unknown[];
      };
      expect(written.launch).toEqual({
        nodeArgs: expect.arrayContaining(['--expose-gc', '--max-semi-space-size=25']),
        cpu: expect.any(Number),
      });
      // Every row's samples passed checkLaunch; --cold-only stopped before the warm requests.
      expect(written.coldRequest.rows.length).toBeGreaterThan(0);
      expect(written.warm).toEqual([]);
    } finally {
      if (existsSync(kept)) {
        copyFileSync(kept, results);
        rmSync(kept);
      }
    }
  },
};

/** The rehearsal block of docs/local-development.md: three commands in sequence. */
async function rehearsal(block: ShellBlock): Promise<void> {
  const [startCommand, keysCommand, smokeCommand] = block.commands;
  expect(block.commands).toHaveLength(3);
  const { shell, url, table, endpoint } = await startDeployed(startCommand!);
  // The key file the block names, in a folder of its own (never the repository's).
  const keyFile = join(mkdtempSync(join(tmpdir(), 'rehearsal-')), 'staging.key');
  const keys = await runToEnd(
    fill(keysCommand!, {
      '--table <printed>': `--table ${table}`,
      '--endpoint <printed>': `--endpoint ${endpoint}`,
      'staging.key': keyFile,
    }),
    newcomerEnvironment(),
  );
  expect(keys.code, keys.output).toBe(0);
  // Run through a pipe, as here, the key goes only to the file.
  expect(keys.output).not.toMatch(/psk_/);
  expect(readFileSync(keyFile, 'utf8')).toMatch(API_KEY_FILE);
  const smoke = await runToEnd(
    fill(smokeCommand!, { 'staging.key': keyFile, 'http://127.0.0.1:3100/v1': url }),
    newcomerEnvironment(),
  );
  expect(smoke.code, smoke.output).toBe(0);
  expect(smoke.output).not.toMatch(/FAIL/);
  expect(smoke.output.match(/^ok\b/gm)?.length ?? 0, smoke.output).toBeGreaterThan(3);
  expect(await shell.stop()).toBe(0);
}

function runnerFor(block: ShellBlock): ((block: ShellBlock) => Promise<void>) | undefined {
  const first = block.commands[0] ?? '';
  if (first.startsWith('npm run start:deployed') && block.commands.length === 3) return rehearsal;
  return RUNNERS[first];
}

const MARKED = documentedBlocks().filter((block) => {
  const mark = MARK.exec(block.mark ?? '');
  return mark?.[1] === 'run as written by' && mark[2] === WALKTHROUGH;
});

// A stage's run needs its cloud assembly; synthesis (when a source changed) is not part of any test's time.
beforeAll(() => ensureCloudAssembly(DEFAULT_OUTDIR, STAGE_APP, { quiet: true }), 240_000);
afterAll(() => running.clear());

describe('the documented blocks, run as written', () => {
  it('finds the blocks marked to run here', () => {
    expect(MARKED.length).toBeGreaterThanOrEqual(4);
  });

  it.each(MARKED.map((block) => [block.where, block] as const))(
    '%s',
    async (_where, block) => {
      const runner = runnerFor(block);
      expect(
        runner,
        `${block.where}: no runner in ${WALKTHROUGH} for a block starting "${block.commands[0]}"`,
      ).toBeDefined();
      await runner!(block);
    },
    240_000,
  );
});
