/**
 * Backups that outlive the table (docs/deploying.md "Backups"): point-in-time recovery goes with a
 * deleted table, so where the stage settings ask for it an AWS Backup plan takes a recovery point of
 * the pets table every day, kept `retentionDays`, in a vault the stack retains. The vault's access
 * policy refuses everyone, its owner included, to delete a recovery point or shorten its life: only
 * AWS Backup's own lifecycle expires them.
 *
 * The control table is left out: its keys can be issued again and its cursor secret rotated, and a
 * restored copy would bring back every key revoked since the backup.
 */
import { Duration, Fn, RemovalPolicy } from 'aws-cdk-lib';
import * as backup from 'aws-cdk-lib/aws-backup';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import type { BackupSettings, Stage } from '../stages.ts';
import { IdTransparentGroup } from './idTransparentGroup.ts';
import { stackInstanceId } from './stackInstance.ts';

/** When the daily recovery point is taken: 05:00 UTC, AWS Backup's default daily window. */
export const DAILY_BACKUP_HOUR_UTC = 5;

/**
 * What AWS Backup does to the table with its role: describe it, read its tags (copied onto the
 * recovery point), and back it up. `StartAwsBackupJob` is the path of AWS Backup's advanced DynamoDB
 * features (the recovery point is stored in the vault, under its access policy); `CreateBackup` the
 * path without them (docs/deploying.md "Backups" says to turn them on).
 */
export const BACKUP_ACTIONS = [
  'dynamodb:DescribeTable',
  'dynamodb:ListTagsOfResource',
  'dynamodb:StartAwsBackupJob',
  'dynamodb:CreateBackup',
] as const;

export interface TableBackupProps {
  readonly stage: Stage;
  readonly settings: BackupSettings;
  readonly table: dynamodb.Table;
}

export class TableBackup extends IdTransparentGroup {
  readonly vault: backup.BackupVault;
  readonly plan: backup.BackupPlan;

  constructor(scope: Construct, id: string, { stage, settings, table }: TableBackupProps) {
    super(scope, id);
    this.vault = new backup.BackupVault(this, 'BackupVault', {
      // A name of its own per stack instance: a stack deployed again after a teardown must not collide with the retained vault.
      backupVaultName: Fn.join('', [`petstore-${stage}-`, stackInstanceId()]),
      removalPolicy: RemovalPolicy.RETAIN,
      blockRecoveryPointDeletion: true,
    });
    this.plan = new backup.BackupPlan(this, 'BackupPlan', {
      backupPlanName: `petstore-${stage}-daily`,
      backupVault: this.vault,
      backupPlanRules: [
        new backup.BackupPlanRule({
          ruleName: 'Daily',
          scheduleExpression: events.Schedule.cron({ hour: String(DAILY_BACKUP_HOUR_UTC), minute: '0' }),
          deleteAfter: Duration.days(settings.retentionDays),
        }),
      ],
    });
    const role = new iam.Role(this, 'BackupRole', {
      assumedBy: new iam.ServicePrincipal('backup.amazonaws.com'),
      description: `Backs up the ${stage} pets table daily (AWS Backup): that table only, nothing else.`,
      inlinePolicies: {
        backup: new iam.PolicyDocument({
          statements: [new iam.PolicyStatement({ actions: [...BACKUP_ACTIONS], resources: [table.tableArn] })],
        }),
      },
    });
    this.plan.addSelection('PetsTable', {
      resources: [backup.BackupResource.fromDynamoDbTable(table)],
      role,
      // AWS's managed policy would let the role back up every resource of the account.
      disableDefaultBackupPolicy: true,
    });
  }
}
