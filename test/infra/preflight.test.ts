/**
 * The app's check before it builds anything (infra/preflight.ts): a CDK command that needs an AWS
 * account fails in one line, before any bundling, when the CLI found no credentials; a synth or a
 * list keeps working offline. The last tests run the real CLI with no credentials at all, and a
 * proxy on loopback that counts every connection: nothing may leave the machine.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT_COMMANDS,
  cdkCliArgs,
  cdkCommand,
  missingCredentials,
  readProcess,
  type ProcessInfo,
} from '../../infra/preflight.ts';

/** What the CLI gives the app when it found no credentials: a region (its default), no account. */
const RUN_BY_CLI_WITHOUT_ACCOUNT = { CDK_DEFAULT_REGION: 'us-east-1', CDK_OUTDIR: 'cdk.out' };

/** A process tree as the OS shows it to the app, nearest first (today's `npx cdk diff` chain). */
function tree(...chain: (readonly string[])[]): (pid: number) => ProcessInfo | undefined {
  return (pid) => {
    const args = chain[pid - 100];
    return args && { parentPid: pid + 1, args };
  };
}

const NPX_CDK_DIFF = [
  ['node', '/repo/infra/app.ts'],
  ['node', '/repo/node_modules/tsx/dist/cli.mjs', 'infra/app.ts'],
  ['sh', '-c', 'tsx infra/app.ts'],
  ['npm exec tsx infra/app.ts'],
  ['/bin/sh', '-c', 'npx tsx infra/app.ts'],
  ['node', '/repo/node_modules/.bin/cdk', '--profile', 'ops', 'diff', 'PetStore-staging'],
  ['sh', '-c', "'cdk' --profile ops diff PetStore-staging"],
];

describe('cdkCommand', () => {
  it.each([
    [['diff', 'PetStore-staging'], 'diff'],
    [['--profile', 'ops', 'deploy', 'PetStore-production', '--parameters', 'AlarmEmail=ops@example.com'], 'deploy'],
    [['-a', 'npx tsx infra/app.ts', '--no-notices', 'destroy', 'PetStore-staging', '--force'], 'destroy'],
    [['synth', '--quiet', '-o', '/tmp/out'], 'synth'],
    [['ls'], 'ls'],
    [['--version'], undefined],
    // An option's value is never the command: a profile named "deploy" must not stop an offline synth.
    [['--profile', 'deploy', 'synth'], 'synth'],
    [['-o', 'diff', '--context', 'x=deploy', 'ls'], 'ls'],
    [['--profile=deploy', 'synth'], 'synth'],
    [['PetStore-staging', 'deploy'], undefined],
  ])('reads %j as %s', (args, command) => {
    expect(cdkCommand(args)).toBe(command);
  });

  it('knows the commands that act on an account', () => {
    for (const command of ['deploy', 'diff', 'destroy', 'bootstrap'])
      expect(ACCOUNT_COMMANDS.has(command), command).toBe(true);
    for (const command of ['synth', 'synthesize', 'ls', 'list'])
      expect(ACCOUNT_COMMANDS.has(command), command).toBe(false);
  });
});

describe('cdkCliArgs', () => {
  it('finds the nearest cdk process among the ancestors and returns its arguments', () => {
    expect(cdkCliArgs(100, tree(...NPX_CDK_DIFF))).toEqual(['--profile', 'ops', 'diff', 'PetStore-staging']);
  });

  it('finds a global install or the executable itself, and nothing when no ancestor is the CLI', () => {
    expect(cdkCliArgs(100, tree(['node', 'app.ts'], ['/usr/local/bin/cdk', 'deploy']))).toEqual(['deploy']);
    expect(
      cdkCliArgs(100, tree(['node', 'app.ts'], ['node', 'C:\\npm\\node_modules\\aws-cdk\\bin\\cdk', 'diff'])),
    ).toEqual(['diff']);
    expect(cdkCliArgs(100, tree(['node', 'app.ts'], ['node', 'vitest.mjs', 'run']))).toBeUndefined();
    // A shell whose script mentions cdk is not the CLI.
    expect(cdkCliArgs(100, tree(['node', 'app.ts'], ['sh', '-c', 'cdk diff']))).toBeUndefined();
  });

  it('reads the real process tree: this process, then its parent', () => {
    const self = readProcess(process.pid);
    expect(self?.parentPid).toBe(process.ppid);
    expect(self?.args.join(' ')).toContain('node');
    expect(readProcess(process.ppid)?.args.length).toBeGreaterThan(0);
  });
});

describe('missingCredentials', () => {
  const never = () => {
    throw new Error('must not read the process tree');
  };

  it('says nothing, and reads no process, when the CLI did not run the app or found an account', () => {
    expect(missingCredentials({}, never)).toBeUndefined();
    expect(missingCredentials({ CDK_DEFAULT_REGION: 'us-east-1' }, never)).toBeUndefined();
    expect(
      missingCredentials({ ...RUN_BY_CLI_WITHOUT_ACCOUNT, CDK_DEFAULT_ACCOUNT: '123456789012' }, never),
    ).toBeUndefined();
  });

  it.each(['deploy', 'diff', 'destroy', 'bootstrap'])('refuses cdk %s without an account, in one line', (command) => {
    const message = missingCredentials(RUN_BY_CLI_WITHOUT_ACCOUNT, () => [
      '--profile',
      'ops',
      command,
      'PetStore-staging',
    ]);
    expect(message).toMatch(new RegExp(`^cdk ${command} needs AWS credentials and the CDK CLI found none that work: `));
    expect(message).toContain('AWS_PROFILE');
    expect(message).toContain('docs/deploying.md, "Deploy"');
    expect(message).not.toContain('\n');
  });

  it('lets a synth or a list run without an account, and anything it cannot place', () => {
    for (const args of [['synth', '--quiet'], ['ls'], ['--version'], undefined]) {
      expect(
        missingCredentials(RUN_BY_CLI_WITHOUT_ACCOUNT, () => args),
        JSON.stringify(args),
      ).toBeUndefined();
    }
  });
});

describe('the CDK CLI without credentials (npx cdk, as a deployer runs it)', () => {
  const root = resolve(import.meta.dirname, '../..');
  let home: string;
  let tripwire: Server;
  let connections = 0;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'preflight-'));
    writeFileSync(join(home, 'config'), '');
    writeFileSync(join(home, 'credentials'), '');
    tripwire = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((listening) => tripwire.listen(0, '127.0.0.1', listening));
  });
  afterAll(async () => {
    rmSync(home, { recursive: true, force: true });
    await new Promise((closed) => tripwire.close(closed));
  });

  /**
   * `npx cdk <args>` with no credentials anywhere: no AWS variables, empty config and credentials
   * files, no instance metadata, no telemetry, notices or update checks, and every HTTP(S) client
   * that honours a proxy sent to the tripwire.
   */
  function cdk(...args: string[]): Promise<{ code: number; out: string; outdir: string }> {
    const outdir = join(home, `out-${args[0]}`);
    const proxy = `http://127.0.0.1:${(tripwire.address() as { port: number }).port}`;
    return new Promise((done) => {
      execFile(
        'npx',
        ['cdk', ...args, '--no-notices', '-o', outdir],
        {
          cwd: root,
          env: {
            PATH: `${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
            HOME: home,
            AWS_CONFIG_FILE: join(home, 'config'),
            AWS_SHARED_CREDENTIALS_FILE: join(home, 'credentials'),
            AWS_EC2_METADATA_DISABLED: 'true',
            CDK_DISABLE_CLI_TELEMETRY: 'true',
            CDK_DISABLE_VERSION_CHECK: '1',
            npm_config_update_notifier: 'false',
            HTTPS_PROXY: proxy,
            HTTP_PROXY: proxy,
          },
        },
        (error, stdout, stderr) =>
          done({ code: error ? Number(error.code ?? 1) : 0, out: `${stdout}${stderr}`, outdir }),
      );
    });
  }

  it('fails `cdk diff PetStore-staging` with the one line, before bundling anything, and sends nothing', async () => {
    const { code, out, outdir } = await cdk('diff', 'PetStore-staging');
    expect(code).not.toBe(0);
    const lines = out.split('\n').filter((line) => line.trim() && !line.startsWith('npm warn'));
    const ours = lines.filter((line) =>
      line.startsWith('cdk diff needs AWS credentials and the CDK CLI found none that work'),
    );
    expect(ours, out).toHaveLength(1);
    // Besides it, only the CLI's own note that the app exited.
    expect(
      lines.filter((line) => !ours.includes(line)),
      out,
    ).toEqual(['npx tsx infra/app.ts: Subprocess exited with error 1']);
    expect(out).not.toContain('Bundling asset');
    expect(out).not.toContain('Unable to resolve AWS account');
    expect(readdirSync(outdir).filter((entry) => entry.startsWith('asset.'))).toEqual([]);
    expect(connections).toBe(0);
  }, 120_000);

  it('still lists the stacks offline (`cdk ls`), and sends nothing', async () => {
    const { code, out } = await cdk('ls');
    expect(code, out).toBe(0);
    expect(out).toContain('PetStore-staging');
    expect(out).toContain('PetStore-production');
    expect(connections).toBe(0);
  }, 120_000);
});
