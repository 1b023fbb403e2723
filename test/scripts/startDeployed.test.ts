/**
 * `npm run start:deployed` on bad input: one clear line and a non-zero exit, never a stack trace.
 * (Serving a stage as deployed is tested in test/local/deployed/deployedStage.test.ts.)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/bundling.ts';
import { DEFAULT_OUTDIR, ensureCloudAssembly } from '../../local/deployed/freshAssembly.ts';
import { OFFLINE_PARAMETERS, parseStartDeployed } from '../../scripts/startDeployed.ts';

function run(...args: string[]) {
  const result = spawnSync(join(PROJECT_ROOT, 'node_modules', '.bin', 'node'), ['--import', 'tsx', 'scripts/startDeployed.ts', ...args], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, lines: result.stderr.split('\n').filter(Boolean) };
}

describe('start:deployed arguments', () => {
  it('reads the stage, port, assembly and parameters, with the offline placeholder for production alarms', () => {
    expect(parseStartDeployed(['--stage', 'production', '--port', '0', '--parameter', 'AlarmEmail=me@example.org'])).toEqual({
      stage: 'production',
      port: 0,
      outdir: DEFAULT_OUTDIR,
      parameters: { ...OFFLINE_PARAMETERS, AlarmEmail: 'me@example.org' },
    });
  });

  it.each([
    [[], /--stage is required/],
    [['--stage', 'qa'], /unknown stage "qa": the stages are staging and production/],
    [['--stage', 'staging', '--port', 'x'], /--port must be a port number/],
    [['--stage', 'staging', '--port', ''], /--port must be a port number from 0 to 65535 \(0: any free port\), not empty/],
    [['--stage', 'staging', '--port', '1e3'], /--port must be a port number .* not "1e3"/],
    [['--stage', 'staging', '--parameter', 'nothing'], /--parameter takes Name=Value/],
    [['--stage', 'staging', '--colour'], /Unknown option '--colour'/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseStartDeployed(argv)).toThrow(message);
  });
});

describe('start:deployed on bad input', () => {
  it('an unknown stage: one line and the usage, exit 2', () => {
    const { status, lines } = run('--stage', 'qa');
    expect(status).toBe(2);
    expect(lines).toEqual([expect.stringMatching(/^start:deployed: unknown stage "qa"/), expect.stringMatching(/^Usage: npm run start:deployed/)]);
  });

  it('an assembly it cannot read: one line, exit 1', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'cdk-out-'));
    const manifest = join(outdir, 'manifest.json');
    writeFileSync(manifest, '{"artifacts":{}}');
    const later = new Date(Date.now() + 3_600_000);
    utimesSync(manifest, later, later); // newer than the sources: no synthesis
    const { status, lines } = run('--stage', 'staging', '--cdk-out', outdir);
    expect(status).toBe(1);
    expect(lines).toEqual([expect.stringMatching(/^start:deployed: .*PetStore-staging/)]);
  });

  it('a port in use: one line naming it, exit 1', async () => {
    await ensureCloudAssembly(DEFAULT_OUTDIR, { quiet: true });
    const server = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const { status, lines } = run('--stage', 'staging', '--port', String(port));
      expect(status).toBe(1);
      expect(lines).toEqual([expect.stringMatching(new RegExp(`^start:deployed: .*${port}.*in use`))]);
    } finally {
      server.close();
    }
  }, 120_000);
});
