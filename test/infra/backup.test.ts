/**
 * The pets table's AWS Backup (infra/constructs/backup.ts; docs/deploying.md "Backups"): in
 * production a daily recovery point kept 35 days in a vault that outlives the stack and refuses
 * deletions; none in staging.
 */
import { describe, expect, it } from 'vitest';
import { BACKUP_ACTIONS, DAILY_BACKUP_HOUR_UTC } from '../../infra/constructs/backup.ts';
import { STAGE_SETTINGS } from '../../infra/stages.ts';
import { getAtt, props, ref, strings, synthesizedStages } from './templates.ts';

const of = synthesizedStages();

describe('backup settings', () => {
  it('back production up daily for 35 days, and not staging', () => {
    expect(STAGE_SETTINGS.production.backup).toEqual({ retentionDays: 35 });
    expect(STAGE_SETTINGS.staging.backup).toBe(false);
  });
});

describe('PetStore-production backups', () => {
  it('take a recovery point of the pets table every day, deleted after the days the settings keep it', () => {
    const s = of('production');
    const plans = s.ofType('AWS::Backup::BackupPlan');
    expect(plans).toHaveLength(1);
    const { BackupPlan: plan } = props(plans[0]![1]) as { BackupPlan: Record<string, any> };
    expect(plan.BackupPlanRule).toEqual([
      expect.objectContaining({
        ScheduleExpression: `cron(0 ${DAILY_BACKUP_HOUR_UTC} * * ? *)`,
        Lifecycle: { DeleteAfterDays: 35 },
        TargetBackupVault: getAtt(s.logicalId(s.stack.backup!.vault), 'BackupVaultName'),
      }),
    ]);
    const selections = s.ofType('AWS::Backup::BackupSelection');
    expect(selections).toHaveLength(1);
    const { BackupSelection: selection } = props(selections[0]![1]) as { BackupSelection: Record<string, any> };
    // The pets table only: the control table's keys are issued again, and a restored copy would bring back revoked keys.
    expect(selection.Resources).toEqual([expect.anything()]);
    expect(strings(selection.Resources)).toContain(s.logicalId(s.stack.table));
    expect(strings(selection.Resources)).not.toContain(s.logicalId(s.stack.controlTable));
  });

  it('keep them in a vault that deleting the stack leaves, and that refuses anyone deleting a recovery point early', () => {
    const s = of('production');
    const vaults = s.ofType('AWS::Backup::BackupVault');
    expect(vaults).toHaveLength(1);
    const [, vault] = vaults[0]!;
    expect(vault.DeletionPolicy).toBe('Retain');
    expect(vault.UpdateReplacePolicy).toBe('Retain');
    const policy = props(vault).AccessPolicy as { Statement: Record<string, unknown>[] };
    expect(policy.Statement).toEqual([
      expect.objectContaining({
        Effect: 'Deny',
        Principal: { AWS: '*' },
        Action: expect.arrayContaining(['backup:DeleteRecoveryPoint', 'backup:UpdateRecoveryPointLifecycle']),
      }),
    ]);
    // Named anew by each stack instance: a redeploy after a teardown never collides with the retained vault.
    expect(JSON.stringify(props(vault).BackupVaultName)).toContain('AWS::StackId');
    expect(s.json.Outputs?.BackupVaultName?.Value).toEqual(getAtt(vaults[0]![0], 'BackupVaultName'));
  });

  it('back up with a role of their own that may back up the pets table only: no AWS managed policy, no wildcard', () => {
    const s = of('production');
    const [, selection] = s.ofType('AWS::Backup::BackupSelection')[0]!;
    const roleArn = (props(selection).BackupSelection as { IamRoleArn: unknown }).IamRoleArn;
    const roleId = (roleArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const role = props(s.resource(roleId)) as Record<string, any>;
    expect(role.AssumeRolePolicyDocument.Statement).toEqual([
      expect.objectContaining({ Principal: { Service: 'backup.amazonaws.com' }, Action: 'sts:AssumeRole' }),
    ]);
    expect(role.ManagedPolicyArns).toBeUndefined();
    const statements = (role.Policies as { PolicyDocument: { Statement: unknown[] } }[]).flatMap(
      (policy) => policy.PolicyDocument.Statement,
    );
    expect(statements).toEqual([
      { Effect: 'Allow', Action: [...BACKUP_ACTIONS].sort(), Resource: getAtt(s.logicalId(s.stack.table), 'Arn') },
    ]);
    // Nothing else in the stack grants the role anything.
    for (const [, policy] of s.ofType('AWS::IAM::Policy')) expect(props(policy).Roles).not.toContainEqual(ref(roleId));
  });
});

describe('PetStore-staging backups', () => {
  it('are point-in-time recovery only: no plan, no vault', () => {
    const s = of('staging');
    expect(s.stack.backup).toBeUndefined();
    for (const type of ['AWS::Backup::BackupPlan', 'AWS::Backup::BackupVault', 'AWS::Backup::BackupSelection'])
      s.template.resourceCountIs(type, 0);
    expect(s.json.Outputs).not.toHaveProperty('BackupVaultName');
  });
});
