/**
 * Least privilege, the other way round from the gate's denials: each stage run as deployed, every
 * path driven (test/support/deployedStage.ts driveEveryGrantedPath), and every DynamoDB grant of
 * every role must have allowed at least one call (tools/stage-emulator/src/grantUsage.ts). A grant no call
 * uses is either a path the suite does not drive, or a grant to take out of infra/. A copy of the
 * template with one extra grant proves the check names it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackName } from '../../infra/stages.ts';
import { STAGES } from '../../lib/domain/stages.ts';
import { readStack, type CfnTemplate } from '../../tools/stage-emulator/src/cloudAssembly.ts';
import type { IamReport } from '../../tools/stage-emulator/src/grantUsage.ts';
import { ensureCloudAssembly } from '../../tools/stage-emulator/src/freshAssembly.ts';
import { driveEveryGrantedPath, startStage, type RunningStage } from '../support/deployedStage.ts';
import { DEFAULT_OUTDIR, STAGE_APP } from '../../local/stageApp.ts';

/** `<function>: <grant>` for every grant no call used. */
const unusedGrants = (report: IamReport): string[] =>
  report.functions.flatMap((fn) => fn.unusedGrants.map((grant) => `${fn.function}: ${grant}`));

const REPORT_LINE = /^IAM (\w+): (\d+) calls? allowed, (\d+) denied; unused grants: (.+)$/;

describe.each(STAGES)('%s: every DynamoDB grant of every role is used', (stage) => {
  let running: RunningStage;

  beforeAll(async () => {
    running = await startStage(stage);
  }, 240_000);
  afterAll(() => running?.close());

  it('drives every operation; no grant is left unused and no call denied, and stop prints one line per function', async () => {
    await driveEveryGrantedPath(running, stage);
    const report = running.api.iamReport();
    expect(unusedGrants(report)).toEqual([]);
    expect(report.functions.map((fn) => [fn.function, fn.denied])).toEqual(
      report.functions.map((fn) => [fn.function, 0]),
    );
    // Each function's grants, every one of them used: a role with no DynamoDB grant would pass vacuously.
    for (const fn of report.functions) {
      expect(fn.grants.length, fn.function).toBeGreaterThan(0);
      expect(fn.allowed, fn.function).toBeGreaterThan(0);
    }

    await running.close();
    const lines = running.logs.filter((line) => line.startsWith('IAM '));
    // Each role's report, as start:deployed prints it at stop (the suite's record of least privilege).
    console.log(`${stage}:\n${lines.join('\n')}`);
    expect(lines.map((line) => REPORT_LINE.exec(line)?.slice(1).map(String))).toEqual(
      report.functions.map((fn) => [fn.function, expect.stringMatching(/^\d+$/), '0', 'none']),
    );
  }, 120_000);
});

describe('a grant no call uses', () => {
  let running: RunningStage;

  /** Staging, with dynamodb:DeleteItem added to createPet's statement on the pets table: nothing deletes a pet. */
  function stagingWithAnExtraGrant(): CfnTemplate {
    const template = structuredClone(readStack(DEFAULT_OUTDIR, stackName('staging')).template);
    const role = Object.values(template.Resources).find(
      (r) => r.Type === 'AWS::IAM::Role' && JSON.stringify(r.Properties).includes('"PolicyName":"createPet"'),
    )!;
    const policy = (
      role.Properties!.Policies as { PolicyDocument: { Statement: { Sid?: string; Action: string | string[] }[] } }[]
    )[0]!;
    const table = policy.PolicyDocument.Statement.find((statement) => statement.Sid === 'Table')!;
    table.Action = [...[table.Action].flat(), 'dynamodb:DeleteItem'];
    return template;
  }

  beforeAll(async () => {
    await ensureCloudAssembly(DEFAULT_OUTDIR, STAGE_APP, { quiet: true });
    running = await startStage('staging', { template: stagingWithAnExtraGrant() });
  }, 240_000);
  afterAll(() => running?.close());

  it('fails the check, naming the grant and where its statement is written', async () => {
    await driveEveryGrantedPath(running, 'extra');
    const report = running.api.iamReport();
    expect(unusedGrants(report)).toEqual(['CreatePetFunction: dynamodb:DeleteItem on PetsTable (Table)']);
    const createPet = report.functions.find((fn) => fn.function === 'CreatePetFunction')!;
    expect(createPet.writtenIn).toBe('infra/constructs/functions.ts (PetStore-staging/Functions/CreatePetRole)');
    expect(createPet.grants.find((grant) => !grant.used)?.source).toMatch(/^infra\/constructs\/permissions\.ts:\d+$/);

    await running.close();
    expect(running.logs).toContainEqual(
      expect.stringMatching(
        /^IAM CreatePetFunction: \d+ calls? allowed, 0 denied; unused grants: dynamodb:DeleteItem on PetsTable \(Table\) at infra\/constructs\/permissions\.ts:\d+$/,
      ),
    );
  }, 120_000);
});
