/**
 * `npm run start:deployed` on bad input: one clear line and a non-zero exit, never a stack trace.
 * (Serving a stage as deployed is tested in test/stage/deployedStage.test.ts.)
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/bundle/bundling.ts';
import { ensureCloudAssembly } from '../../tools/stage-emulator/src/freshAssembly.ts';
import { parseStartDeployed, webAclLine } from '../../tools/stage-emulator/src/cli.ts';
import {
  DEFAULT_INSPECTED,
  DEFAULT_OUTDIR,
  OFFLINE_PARAMETERS,
  STAGE_APP,
  STAGE_STACKS,
} from '../../local/stageApp.ts';

/** What scripts/startDeployed.ts tells the command line of this app. */
const PRODUCT = {
  stacks: STAGE_STACKS,
  outdir: DEFAULT_OUTDIR,
  offlineParameters: OFFLINE_PARAMETERS,
  defaultInspected: DEFAULT_INSPECTED,
};

function run(...args: string[]) {
  const result = spawnSync(
    join(PROJECT_ROOT, 'node_modules', '.bin', 'node'),
    ['--import', 'tsx', 'scripts/startDeployed.ts', ...args],
    {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  return { status: result.status, lines: result.stderr.split('\n').filter(Boolean) };
}

describe('start:deployed arguments', () => {
  it('reads the stage, port, assembly and parameters, with the offline placeholder for production alarms', () => {
    expect(
      parseStartDeployed(['--stage', 'production', '--port', '0', '--parameter', 'AlarmEmail=me@example.org'], PRODUCT),
    ).toEqual({
      stage: 'production',
      port: 0,
      outdir: DEFAULT_OUTDIR,
      parameters: { ...OFFLINE_PARAMETERS, AlarmEmail: 'me@example.org' },
      watch: false,
    });
  });

  it('reads --watch', () => {
    expect(parseStartDeployed(['--stage', 'staging', '--watch'], PRODUCT)).toMatchObject({
      stage: 'staging',
      watch: true,
    });
  });

  it('reads where the IAM report goes', () => {
    expect(parseStartDeployed(['--stage', 'staging', '--iam-report', 'iam.json'], PRODUCT)).toMatchObject({
      stage: 'staging',
      iamReport: join(process.cwd(), 'iam.json'),
    });
    expect(parseStartDeployed(['--stage', 'staging'], PRODUCT)).not.toHaveProperty('iamReport');
  });

  it('says the web ACL is not emulated only where the template has one', () => {
    const template = { Resources: { Acl: { Type: 'AWS::WAFv2::WebACL', Properties: {} } } };
    expect(webAclLine(template)).toMatch(/^ {2}web ACL: Acl \(AWS WAF\) is not emulated: /);
    expect(webAclLine({ Resources: { Table: { Type: 'AWS::DynamoDB::Table', Properties: {} } } })).toBeUndefined();
  });

  it.each([
    [[], /--stage is required/],
    [['--stage', 'staging', '--iam-report', ''], /--iam-report takes a file name/],
    [['--stage', 'qa'], /unknown stage "qa": the stages are staging and production/],
    [['--stage', 'staging', '--port', 'x'], /--port must be a port number/],
    [
      ['--stage', 'staging', '--port', ''],
      /--port must be a port number from 0 to 65535 \(0: any free port\), not empty/,
    ],
    [['--stage', 'staging', '--port', '1e3'], /--port must be a port number .* not "1e3"/],
    [['--stage', 'staging', '--parameter', 'nothing'], /--parameter takes Name=Value/],
    [['--stage', 'staging', '--colour'], /Unknown option '--colour'/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseStartDeployed(argv, PRODUCT)).toThrow(message);
  });
});

describe('start:deployed on bad input', () => {
  it('an unknown stage: one line and the usage, exit 2', () => {
    const { status, lines } = run('--stage', 'qa');
    expect(status).toBe(2);
    expect(lines).toEqual([
      expect.stringMatching(/^start:deployed: unknown stage "qa"/),
      expect.stringMatching(/^Usage: npm run start:deployed/),
    ]);
  });

  it('an IAM report it cannot write: one line at start, exit 2, not at Ctrl-C when the report would be lost', () => {
    const { status, lines } = run('--stage', 'staging', '--iam-report', '/proc/petstore/iam.json');
    expect(status).toBe(2);
    expect(lines).toEqual([
      expect.stringMatching(
        /^start:deployed: cannot write the IAM report to \/proc\/petstore\/iam\.json \(\w+\): give --iam-report a file in a folder you can write\.$/,
      ),
    ]);
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

  it('a port in use: refused at once, before any synthesis, in one line naming it, exit 1', async () => {
    // A missing assembly: anything but a refusal first would synthesize one here, for a minute or more.
    const outdir = join(mkdtempSync(join(tmpdir(), 'cdk-out-')), 'cdk.out');
    const server = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const { status, lines } = run('--stage', 'staging', '--port', String(port), '--cdk-out', outdir);
      expect(status).toBe(1);
      expect(lines).toEqual([expect.stringMatching(new RegExp(`^start:deployed: .*${port}.*in use`))]);
      expect(existsSync(outdir)).toBe(false);
    } finally {
      server.close();
    }
  }, 60_000);

  it('reads --iam-report and --cdk-out from the folder the command was typed in, not the package folder npm runs it from', async () => {
    const typedIn = mkdtempSync(join(tmpdir(), 'typed-in-'));
    const server = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const args = ['--stage', 'staging', '--port', String(port), '--iam-report', 'iam.json'];
      const typed = spawnSync('npm', ['--prefix', PROJECT_ROOT, 'run', '-s', 'start:deployed', '--', ...args], {
        cwd: typedIn,
        encoding: 'utf8',
        timeout: 60_000,
      });
      // Written at start (an unwritable report is refused then), before the port is found taken.
      expect(typed.stderr).toMatch(/in use/);
      expect(existsSync(join(typedIn, 'iam.json'))).toBe(true);
      expect(existsSync(join(PROJECT_ROOT, 'iam.json'))).toBe(false);
      // Run without npm (no INIT_CWD of its own): from the working folder.
      expect(parseStartDeployed([...args, '--cdk-out', 'out'], PRODUCT)).toMatchObject({
        iamReport: join(process.cwd(), 'iam.json'),
        outdir: join(process.cwd(), 'out'),
      });
    } finally {
      server.close();
      rmSync(join(PROJECT_ROOT, 'iam.json'), { force: true });
    }
  }, 120_000);
});

describe('start:deployed --iam-report', () => {
  it('at Ctrl-C prints one IAM line per function and writes the report as JSON', async () => {
    await ensureCloudAssembly(DEFAULT_OUTDIR, STAGE_APP, { quiet: true });
    const file = join(mkdtempSync(join(tmpdir(), 'iam-report-')), 'iam.json');
    const child = spawn(
      join(PROJECT_ROOT, 'node_modules', '.bin', 'node'),
      ['--import', 'tsx', 'scripts/startDeployed.ts', '--stage', 'staging', '--port', '0', '--iam-report', file],
      {
        cwd: PROJECT_ROOT,
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    let stdout = '';
    let stopped = false;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      // Once, as a Ctrl-C: the report lines that follow are more data.
      if (!stopped && stdout.includes('npm run keys')) stopped = child.kill('SIGINT');
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, stdout).toBe(0);
    const report = JSON.parse(readFileSync(file, 'utf8')) as {
      stack: string;
      functions: { function: string; unusedGrants: string[] }[];
    };
    expect(report.stack).toBe('PetStore-staging');
    // Staging has a web ACL by default: the banner says the emulator does not run it.
    expect(stdout).toMatch(/^ {2}web ACL: \w+ \(AWS WAF\) is not emulated: /m);
    const lines = stdout.split('\n').filter((line) => line.startsWith('IAM '));
    // Nothing was called: every function's every grant is unused, and each line says so.
    expect(lines).toEqual(
      report.functions.map((fn) =>
        expect.stringMatching(new RegExp(`^IAM ${fn.function}: 0 calls allowed, 0 denied; unused grants: dynamodb:`)),
      ),
    );
    expect(report.functions.every((fn) => fn.unusedGrants.length > 0)).toBe(true);
  }, 120_000);
});
