/**
 * The documented blocks marked `<!-- run as written by: test/docs/walkthrough.test.ts -->`, run as a
 * newcomer runs them (shell.ts): each block's text through bash from the repository root, long-running
 * commands started, probed over HTTP and stopped with SIGTERM, and every placeholder (`<printed>`,
 * `<the key npm start printed>`, `psk_...`, the default ports) filled from what an earlier command
 * printed. Every marked block must have a runner here, or the suite fails.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, expect } from 'vitest';
import { ensureCloudAssembly } from '../../tools/stage-emulator/src/freshAssembly.ts';
import type { ShellBlock } from './shellBlocks.ts';
import { fill, newcomerEnvironment, runMarkedBlocks, runToEnd, start, type Shell } from './shell.ts';
import { API_KEY_FILE } from '../support/keys.ts';
import { DEFAULT_OUTDIR, STAGE_APP } from '../../local/stageApp.ts';

const WALKTHROUGH = 'test/docs/walkthrough.test.ts';

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

// A stage's run needs its cloud assembly; synthesis (when a source changed) is not part of any test's time.
beforeAll(() => ensureCloudAssembly(DEFAULT_OUTDIR, STAGE_APP, { quiet: true }), 240_000);

runMarkedBlocks(WALKTHROUGH, 'the documented blocks, run as written', 3, runnerFor);
