/**
 * The deploy's check of the account's Lambda concurrency quota (infra/concurrencyPreflight.ts): a
 * stage that reserves concurrency is refused in one line, before anything is bundled or synthesized,
 * when the account's quota cannot hold its reservations and the 10 executions Lambda keeps unreserved
 * (a new account's quota can be 10). Lambda is a stand-in on loopback that answers GetAccountSettings
 * as Lambda does and records each request's SigV4 scope: nothing reaches AWS.
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  UNRESERVED_MINIMUM,
  concurrencyShortfall,
  deployedStages,
  profileOf,
} from '../../infra/concurrencyPreflight.ts';
import { STAGE_SETTINGS, reservedTotal } from '../../infra/stages.ts';

const PRODUCTION_RESERVED = reservedTotal(STAGE_SETTINGS.production);
const never = async (): Promise<number> => {
  throw new Error('must not ask for the quota');
};

describe('the stages a deploy reserves concurrency for', () => {
  it('reserves in production only, for the authorizer and each operation; staging deploys into any account', () => {
    expect(PRODUCTION_RESERVED).toBeGreaterThan(0);
    expect(reservedTotal(STAGE_SETTINGS.staging)).toBe(0);
  });

  it.each([
    [['deploy', 'PetStore-production'], ['production']],
    [
      ['--profile', 'ops', 'deploy', 'PetStore-production', '--parameters', 'AlarmEmail=ops@example.com'],
      ['production'],
    ],
    [['deploy', 'PetStore-staging'], ['staging']],
    [
      ['deploy', 'PetStore-*'],
      ['staging', 'production'],
    ],
    [
      ['deploy', '--all', '--require-approval', 'never'],
      ['staging', 'production'],
    ],
    [['deploy', 'PetStore-account'], []],
    [['--profile', 'deploy', 'deploy', 'PetStore-staging'], ['staging']],
  ])('reads %j as %j', (args, stages) => {
    expect(deployedStages(args)).toEqual(stages);
  });

  it('takes the profile the CLI was given', () => {
    expect(profileOf(['--profile', 'ops', 'deploy'])).toBe('ops');
    expect(profileOf(['deploy', '--profile=prod'])).toBe('prod');
    expect(profileOf(['deploy'])).toBeUndefined();
  });
});

describe('concurrencyShortfall', () => {
  it('refuses in one line a quota that cannot hold the reservations and the unreserved minimum, and lets one that can', async () => {
    const needed = PRODUCTION_RESERVED + UNRESERVED_MINIMUM;
    for (const quota of [10, needed - 1]) {
      const line = await concurrencyShortfall(['deploy', 'PetStore-production'], 'eu-west-1', async () => quota);
      expect(line).toBe(
        `cdk deploy PetStore-production reserves ${PRODUCTION_RESERVED} concurrent Lambda executions (reservedConcurrency in infra/stages.ts), and Lambda keeps 10 unreserved: ` +
          `the account's concurrency quota in eu-west-1 is ${quota}, not the ${needed} that needs. Ask for more (Service Quotas, AWS Lambda, "Concurrent executions") ` +
          'before deploying (docs/deploying.md, "Reserved concurrency").',
      );
    }
    expect(
      await concurrencyShortfall(['deploy', 'PetStore-production'], 'eu-west-1', async () => needed),
    ).toBeUndefined();
    expect(
      await concurrencyShortfall(['deploy', 'PetStore-production'], 'eu-west-1', async () => 1_000),
    ).toBeUndefined();
  });

  it('asks nothing of AWS for a deploy that reserves nothing', async () => {
    expect(await concurrencyShortfall(['deploy', 'PetStore-staging'], 'eu-west-1', never)).toBeUndefined();
    expect(await concurrencyShortfall(['deploy', 'PetStore-account'], 'eu-west-1', never)).toBeUndefined();
  });

  it('says in one line, naming the right, when the quota cannot be read', async () => {
    const denied = Object.assign(new Error('User is not authorized to perform: lambda:GetAccountSettings'), {
      name: 'AccessDeniedException',
    });
    const line = await concurrencyShortfall(['deploy', 'PetStore-production'], 'eu-west-1', () =>
      Promise.reject(denied),
    );
    expect(line).toMatch(
      /^cdk deploy PetStore-production reserves \d+ concurrent Lambda executions, and the account's quota in eu-west-1 could not be read .*AccessDeniedException.*: the deployer needs lambda:GetAccountSettings \(infra\/policies\/deployer-production\.json\)\.$/,
    );
    expect(line).not.toContain('\n');
  });
});

/**
 * The app run as `cdk deploy` runs it: a `cdk` process (a stand-in for the CLI, which would first
 * resolve the account on AWS) running `tsx infra/app.ts` with the environment the CLI gives an app,
 * the deployer's dummy credentials, and Lambda's endpoint on loopback.
 */
describe('cdk deploy PetStore-production, against an account whose quota is too small', () => {
  const root = resolve(import.meta.dirname, '../..');
  let dir: string;
  let lambda: Server;
  let quota = 10;
  const requests: { method?: string; url?: string; scope?: string }[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'concurrency-preflight-'));
    writeFileSync(join(dir, 'config'), '');
    writeFileSync(join(dir, 'credentials'), '');
    const cli = join(dir, 'cdk');
    writeFileSync(cli, `#!/usr/bin/env bash\n"${join(root, 'node_modules', '.bin', 'tsx')}" infra/app.ts\n`);
    chmodSync(cli, 0o755);
    lambda = createServer((request, response) => {
      requests.push({
        method: request.method,
        url: request.url,
        scope: /Credential=[^/]+\/([^,]+),/.exec(request.headers.authorization ?? '')?.[1],
      });
      response.setHeader('Content-Type', 'application/json');
      response.end(
        JSON.stringify({
          AccountLimit: {
            ConcurrentExecutions: quota,
            UnreservedConcurrentExecutions: quota,
            CodeSizeUnzipped: 262144000,
            CodeSizeZipped: 52428800,
            TotalCodeSize: 80530636800,
          },
          AccountUsage: { FunctionCount: 0, TotalCodeSize: 0 },
        }),
      );
    });
    await new Promise<void>((listening) => lambda.listen(0, '127.0.0.1', listening));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await new Promise((closed) => lambda.close(closed));
  });
  beforeEach(() => {
    requests.length = 0;
  });

  function deploy(outdir: string): Promise<{ code: number; out: string }> {
    return new Promise((done) => {
      execFile(
        join(dir, 'cdk'),
        ['deploy', 'PetStore-production', '--parameters', 'AlarmEmail=ops@example.com'],
        {
          cwd: root,
          env: {
            PATH: process.env.PATH ?? '',
            HOME: dir,
            AWS_CONFIG_FILE: join(dir, 'config'),
            AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials'),
            AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
            AWS_SECRET_ACCESS_KEY: 'deployer',
            AWS_EC2_METADATA_DISABLED: 'true',
            AWS_ENDPOINT_URL_LAMBDA: `http://127.0.0.1:${(lambda.address() as AddressInfo).port}`,
            // What the CLI gives the app once it has resolved the account.
            CDK_DEFAULT_ACCOUNT: '123456789012',
            CDK_DEFAULT_REGION: 'eu-west-1',
            CDK_OUTDIR: outdir,
            CDK_CONTEXT_JSON: JSON.stringify({ 'aws:cdk:bundling-stacks': [] }),
          },
        },
        (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, out: `${stdout}${stderr}` }),
      );
    });
  }

  it('stops in one line, before synthesizing anything, having asked Lambda for the quota once', async () => {
    quota = 10;
    const outdir = join(dir, 'refused');
    const { code, out } = await deploy(outdir);
    expect(code).toBe(1);
    expect(out.trimEnd().split('\n')).toEqual([
      expect.stringMatching(
        /^cdk deploy PetStore-production reserves \d+ concurrent Lambda executions .*quota in eu-west-1 is 10, not the \d+ that needs\./,
      ),
    ]);
    expect(requests).toEqual([
      {
        method: 'GET',
        url: '/2016-08-19/account-settings/',
        scope: expect.stringMatching(/^\d{8}\/eu-west-1\/lambda\/aws4_request$/),
      },
    ]);
    expect(existsSync(outdir) ? readdirSync(outdir) : []).toEqual([]);
  }, 120_000);

  it('goes on to synthesize when the quota holds them', async () => {
    quota = 1_000;
    const outdir = join(dir, 'allowed');
    const { code, out } = await deploy(outdir);
    expect(code, out).toBe(0);
    expect(requests).toHaveLength(1);
    expect(readdirSync(outdir)).toContain('PetStore-production.template.json');
  }, 120_000);
});
