/**
 * One Pet Store deployment, composed of one construct per part (infra/constructs/): storage,
 * functions, the REST API, its web firewall (where the stage has one), monitoring and deployment. Everything is derived from the shared
 * definitions in lib/ (routes, tables, error codes), so the deployed API cannot drift from the local
 * one. Instantiated once per stage (see stacks.ts).
 */
import { CfnOutput, Stack, Tags, type CfnElement, type StackProps } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { API_BASE_PATH } from '../lib/domain/routes.ts';
import { acceptCfnLintFindings } from './cfnLintAcceptance.ts';
import { KeyAuthorizer, KeyUsagePlan, type KeyAuthorizerProps } from './constructs/authorizer.ts';
import { TableBackup } from './constructs/backup.ts';
import { Deployment } from './constructs/deployment.ts';
import { Firewall } from './constructs/firewall.ts';
import { Functions, type FunctionLimits, type FunctionsProps, type LogLifetime } from './constructs/functions.ts';
import { logicalIdWithoutGroups } from './constructs/idTransparentGroup.ts';
import { Monitoring, type MonitoringProps } from './constructs/monitoring.ts';
import { PetStoreApi, type RestApiProps } from './constructs/restApi.ts';
import { Storage } from './constructs/storage.ts';
import { CONTROL_TABLE_OUTPUT, PETS_TABLE_OUTPUT, USAGE_PLAN_OUTPUT } from './names.ts';
import { removalPolicyFor, reservedFor, type StageSettings } from './stages.ts';

export interface PetStoreStackProps extends StackProps {
  readonly settings: StageSettings;
}

export class PetStoreStack extends Stack {
  readonly settings: StageSettings;
  readonly storage: Storage;
  /** The pets table's daily AWS Backup, where the stage's settings ask for one. */
  readonly backup: TableBackup | undefined;
  readonly functions: Functions;
  readonly deployment: Deployment;
  readonly restApi: PetStoreApi;
  readonly keyAuthorizer: KeyAuthorizer;
  readonly keyUsagePlan: KeyUsagePlan;
  /** The stage's web ACL, where its settings ask for one. */
  readonly firewall: Firewall | undefined;
  readonly monitoring: Monitoring;

  constructor(scope: Construct, id: string, props: PetStoreStackProps) {
    super(scope, id, { terminationProtection: props.settings.protectData, ...props });
    const { settings } = props;
    this.settings = settings;
    Tags.of(this).add('service', 'petstore');
    Tags.of(this).add('stage', settings.stage);
    acceptCfnLintFindings(this);

    this.storage = new Storage(this, 'Storage', {
      deletionProtection: settings.protectData,
      removalPolicy: removalPolicyFor(settings),
    });
    this.backup = settings.backup
      ? new TableBackup(this, 'Backup', { stage: settings.stage, settings: settings.backup, table: this.table })
      : undefined;
    this.functions = new Functions(this, 'Functions', {
      ...functionsSettings(settings),
      tableName: this.table.tableName,
      tableArn: this.table.tableArn,
      controlTableName: this.controlTable.tableName,
      controlTableArn: this.controlTable.tableArn,
    });
    this.deployment = new Deployment(this, 'Deployment', {
      canaryDeploys: settings.canaryDeploys,
      functions: this.functions,
    });
    this.keyAuthorizer = new KeyAuthorizer(this, 'KeyAuthorizer', {
      ...keyAuthorizerSettings(settings),
      controlTableName: this.controlTable.tableName,
      controlTableArn: this.controlTable.tableArn,
      publish: (fn) => this.deployment.publish('authorizer', fn),
    });
    this.restApi = new PetStoreApi(this, 'RestApi', {
      ...restApiSettings(settings),
      targets: (operation) => this.deployment.alias(operation),
      authorizer: this.keyAuthorizer.authorizer,
    });
    this.keyUsagePlan = new KeyUsagePlan(this, 'KeyLimits', {
      stage: settings.stage,
      limits: settings.keyLimits,
      api: this.api,
      apiStage: this.api.deploymentStage,
      createPet: this.restApi.methods.get('createPet')!,
    });
    this.firewall = settings.webAcl
      ? new Firewall(this, 'Firewall', {
          stage: settings.stage,
          rates: settings.webAcl,
          blockedRequestLogs: logLifetime(settings),
          apiStage: this.api.deploymentStage,
        })
      : undefined;
    this.monitoring = new Monitoring(this, 'Monitoring', {
      ...monitoringSettings(settings),
      api: this.api,
      accessLogs: this.restApi.accessLogs,
      functions: this.functions,
      authorizer: this.keyAuthorizer,
      tables: { pets: this.table, control: this.controlTable },
      firewall: this.firewall,
    });
    for (const deployed of this.deployment.aliases.keys()) {
      this.deployment.rollBackOn(deployed, this.monitoring.rollbackAlarms(deployed));
    }
    this.#outputs();
  }

  get table(): dynamodb.Table {
    return this.storage.table;
  }

  get controlTable(): dynamodb.Table {
    return this.storage.controlTable;
  }

  get api(): apigw.RestApi {
    return this.restApi.api;
  }

  /** The constructs that group the stack's parts do not show in logical ids: see constructs/idTransparentGroup.ts. */
  protected override allocateLogicalId(element: CfnElement): string {
    return logicalIdWithoutGroups(this, element);
  }

  #outputs(): void {
    const { stage } = this.settings;
    new CfnOutput(this, 'ApiUrl', {
      description: `Base URL of the ${stage} Pet Store API (ends with ${API_BASE_PATH}/).`,
      value: this.api.url,
    });
    new CfnOutput(this, PETS_TABLE_OUTPUT, { description: `The ${stage} pets table.`, value: this.table.tableName });
    new CfnOutput(this, CONTROL_TABLE_OUTPUT, {
      description: `The ${stage} control table (API keys, cursor secret, idempotency records; npm run keys reads this output).`,
      value: this.controlTable.tableName,
    });
    new CfnOutput(this, USAGE_PLAN_OUTPUT, {
      description: `The ${stage} usage plan: each API key's throttle and quota (npm run keys adds every key to it).`,
      value: this.keyUsagePlan.plan.usagePlanId,
    });
    new CfnOutput(this, 'DashboardName', {
      description: `The ${stage} CloudWatch dashboard.`,
      value: this.monitoring.dashboard.dashboardName,
    });
    if (this.firewall) {
      new CfnOutput(this, 'BlockedRequestsLogGroup', {
        description: `The ${stage} web ACL's blocked requests (keys redacted); kept as long as the stage's other logs.`,
        value: this.firewall.blockedRequests.logGroupName,
      });
    }
    if (this.backup) {
      new CfnOutput(this, 'BackupVaultName', {
        description: `The ${stage} pets table's daily recovery points (AWS Backup); retained when the stack is deleted.`,
        value: this.backup.vault.backupVaultName,
      });
    }
    new CfnOutput(this, 'AlarmTopicArn', {
      description: `Every ${stage} alarm notifies this SNS topic (subscribers: the AlarmEmail parameter, alarmEmails in infra/stages.ts).`,
      value: this.monitoring.topic.topicArn,
    });
  }
}

// How the stage's settings split into each construct's props: the constructs never see StageSettings.

/** The tables' names and ARNs, which the stack passes from Storage rather than from the settings. */
type TableProps = 'tableName' | 'tableArn' | 'controlTableName' | 'controlTableArn';

const logLifetime = (settings: StageSettings): LogLifetime => ({
  retention: settings.logRetention,
  removalPolicy: removalPolicyFor(settings),
});

const functionLimits = ({ functionMemoryMiB, functionTimeout }: StageSettings): FunctionLimits => ({
  memoryMiB: functionMemoryMiB,
  timeout: functionTimeout,
});

function functionsSettings(settings: StageSettings): Omit<FunctionsProps, TableProps> {
  return {
    stage: settings.stage,
    limits: functionLimits(settings),
    logs: logLifetime(settings),
    reservedConcurrency: settings.reservedConcurrency ? settings.reservedConcurrency.operations : undefined,
    statusIndexShards: settings.statusIndexShards,
    corsAllowedOrigins: settings.corsAllowedOrigins,
  };
}

function keyAuthorizerSettings(settings: StageSettings): Omit<KeyAuthorizerProps, TableProps | 'publish'> {
  return {
    stage: settings.stage,
    limits: functionLimits(settings),
    logs: logLifetime(settings),
    reservedConcurrency: reservedFor(settings, 'authorizer'),
  };
}

function restApiSettings(settings: StageSettings): Omit<RestApiProps, 'targets' | 'authorizer'> {
  return {
    stage: settings.stage,
    throttling: settings.throttling,
    accessLogs: logLifetime(settings),
    corsAllowedOrigins: settings.corsAllowedOrigins,
    behindWebAcl: settings.webAcl !== false,
  };
}

function monitoringSettings(
  settings: StageSettings,
): Pick<MonitoringProps, 'stage' | 'thresholds' | 'subscribers' | 'functionTimeout' | 'reservedConcurrency'> {
  return {
    stage: settings.stage,
    thresholds: settings.alarms,
    subscribers: {
      requireAlarmSubscriber: settings.requireAlarmSubscriber,
      alarmEmails: settings.alarmEmails,
      alarmTopicArns: settings.alarmTopicArns,
    },
    functionTimeout: settings.functionTimeout,
    reservedConcurrency: settings.reservedConcurrency,
  };
}
