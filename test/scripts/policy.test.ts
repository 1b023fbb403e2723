/**
 * `npm run -s policy`, the filling step of docs/deploying.md "Who may do what": run through npm as the
 * docs write it, it prints the policy filled, and refuses in one line (exit 2, nothing on stdout) a
 * placeholder left without a value (an unset $AWS_REGION, a failed `aws sts get-caller-identity`) or
 * given a value of the wrong shape.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const policy = (...args: string[]) =>
  spawnSync('npm', ['run', '-s', 'policy', '--', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
const DEPLOYER = 'infra/policies/deployer-staging.json';
const KEY_OPERATOR = 'infra/policies/key-operator.json';

describe('npm run policy', () => {
  it('prints the policy with every placeholder filled', () => {
    const run = policy(
      KEY_OPERATOR,
      '--account',
      '123456789012',
      '--region',
      'eu-west-1',
      '--stage',
      'staging',
      '--usage-plan-id',
      'abc123',
    );
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).not.toMatch(/<[a-z-]+>/);
    const statements = (JSON.parse(run.stdout) as { Statement: { Resource: string }[] }).Statement;
    expect(statements.map((statement) => statement.Resource)).toContain(
      'arn:aws:apigateway:eu-west-1::/usageplans/abc123/keys',
    );
  });

  it.each([
    [[DEPLOYER, '--account', '123456789012', '--region', ''], /the policy has <region>: give --region/],
    [[DEPLOYER, '--account', '', '--region', 'us-east-1'], /the policy has <account>: give --account/],
    [[DEPLOYER, '--account', 'None', '--region', 'us-east-1'], /--account "None" is not a 12-digit AWS account id/],
    [
      [KEY_OPERATOR, '--account', '123456789012', '--region', 'us-east-1', '--stage', 'staging'],
      /give --usage-plan-id/,
    ],
    [
      [
        KEY_OPERATOR,
        '--account',
        '123456789012',
        '--region',
        'us-east-1',
        '--stage',
        'prod',
        '--usage-plan-id',
        'abc123',
      ],
      /--stage "prod" is not one of staging, production/,
    ],
    [
      ['infra/policies/none.json', '--account', '123456789012', '--region', 'us-east-1'],
      /cannot read infra\/policies\/none.json/,
    ],
  ])('%j: one line, exit 2', (args, line) => {
    const run = policy(...args);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(line);
    expect(run.status).toBe(2);
  });

  it('reads the policy file from the folder the command was typed in, not the package folder npm runs it from', () => {
    const run = spawnSync(
      'npm',
      ['run', '-s', 'policy', '--', 'deployer-staging.json', '--account', '123456789012', '--region', 'eu-west-1'],
      { cwd: join(ROOT, 'infra', 'policies'), encoding: 'utf8', timeout: 30_000 },
    );
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('arn:aws:cloudformation:eu-west-1:123456789012:stack/PetStore-staging/');
  });

  it('refuses, run as docs/deploying.md defines it, in a shell where AWS_REGION was never set', () => {
    const deploying = readFileSync(join(ROOT, 'docs', 'deploying.md'), 'utf8');
    const definition = deploying.split('\n').find((line) => line.startsWith('policy() {'));
    expect(definition, 'docs/deploying.md defines policy()').toBeDefined();
    const env: NodeJS.ProcessEnv = { ...process.env, ACCOUNT: '123456789012' };
    for (const name of ['AWS_REGION', 'AWS_DEFAULT_REGION']) delete env[name];
    const run = spawnSync('bash', ['-c', `${definition}\npolicy ${DEPLOYER}`], {
      cwd: ROOT,
      encoding: 'utf8',
      env,
      timeout: 30_000,
    });
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/the policy has <region>: give --region/)]);
    expect(run.status).toBe(2);
  });
});
