/**
 * Each stage's account (`account` in infra/stages.ts; docs/deploying.md "Region and account"): set,
 * the stage's stack names it, so the CDK CLI refuses to deploy it with another account's
 * credentials; unset, the stack deploys wherever the credentials point.
 */
import { Token } from 'aws-cdk-lib';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_STACK_NAME } from '../../infra/names.ts';
import { STAGES, stackName } from '../../infra/stages.ts';
import { testApp } from './synth.ts';

const STAGING_ACCOUNT = '111122223333';

describe("a stage's account", () => {
  it("is the credentials' where the settings name none (environment-agnostic offline)", () => {
    const { stacks } = testApp();
    for (const stage of STAGES) expect(Token.isUnresolved(stacks.get(stage)!.account), stage).toBe(true);
  });

  it('is the one the settings name, in the assembly the CLI checks the credentials against', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'petstore-env-'));
    try {
      const { app, stacks } = testApp({ outdir, settings: { staging: { account: STAGING_ACCOUNT } } });
      expect(stacks.get('staging')!.account).toBe(STAGING_ACCOUNT);
      expect(Token.isUnresolved(stacks.get('production')!.account)).toBe(true);
      const assembly = app.synth();
      expect(assembly.getStackByName(stackName('staging')).environment.account).toBe(STAGING_ACCOUNT);
      expect(assembly.getStackByName(stackName('production')).environment.account).toBe('unknown-account');
      // The account stack follows whichever account a stage deploys to: each account gets its own.
      expect(assembly.getStackByName(ACCOUNT_STACK_NAME).environment.account).toBe('unknown-account');
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });

  it('is refused at synth unless it is an account id of 12 digits', () => {
    expect(() => testApp({ settings: { production: { account: '1234' } } })).toThrow(
      /account id of 12 digits, not "1234"/,
    );
  });
});
