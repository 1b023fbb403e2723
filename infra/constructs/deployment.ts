/**
 * How a new version reaches traffic. Every function is published as a version behind the alias
 * `live`, which the API invokes. In a stage with `canaryDeploys` (production) a CodeDeploy
 * deployment group per function shifts 10% of traffic to the new version for 5 minutes, then the
 * rest, and rolls back by itself when one of the function's alarms fires; elsewhere (staging) the
 * alias moves to the new version at once.
 */
import { Validations } from 'aws-cdk-lib';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import type { OperationName } from '../../lib/domain/routes.ts';
import { pascal } from '../names.ts';
import { IdTransparentGroup } from './idTransparentGroup.ts';
import type { Functions } from './functions.ts';

const LIVE_ALIAS = 'live';
const CANARY_CONFIG = codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES;

export interface DeploymentProps {
  /** Shift traffic by CodeDeploy canaries, rolled back on alarm, rather than all at once. */
  readonly canaryDeploys: boolean;
  readonly functions: Functions;
}

export class Deployment extends IdTransparentGroup {
  readonly aliases: ReadonlyMap<OperationName, lambda.Alias>;
  /** Empty unless the stage deploys by canary. */
  readonly groups: ReadonlyMap<OperationName, codedeploy.LambdaDeploymentGroup>;

  constructor(scope: Construct, id: string, { canaryDeploys, functions }: DeploymentProps) {
    super(scope, id);
    this.aliases = new Map(
      [...functions.byOperation].map(([operation, { fn }]) => [
        operation,
        new lambda.Alias(this, `${pascal(operation)}LiveAlias`, { aliasName: LIVE_ALIAS, version: fn.currentVersion }),
      ]),
    );
    this.groups = canaryDeploys ? this.#canaries() : new Map();
  }

  alias(operation: OperationName): lambda.Alias {
    const found = this.aliases.get(operation);
    if (!found) throw new Error(`No alias for ${operation}`);
    return found;
  }

  /** The alarms that roll a canary of `operation` back. */
  rollBackOn(operation: OperationName, alarms: readonly cloudwatch.IAlarm[]): void {
    for (const alarm of alarms) this.groups.get(operation)?.addAlarm(alarm);
  }

  #canaries(): Map<OperationName, codedeploy.LambdaDeploymentGroup> {
    const application = new codedeploy.LambdaApplication(this, 'Deploys');
    const groups = new Map<OperationName, codedeploy.LambdaDeploymentGroup>();
    for (const [operation, alias] of this.aliases) {
      const group = new codedeploy.LambdaDeploymentGroup(this, `${pascal(operation)}Canary`, {
        application,
        alias,
        deploymentConfig: CANARY_CONFIG,
        autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
      });
      Validations.of(group).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
        reason:
          "CodeDeploy's service role for Lambda canaries: AWS's Limited policy is the documented grant for " +
          'shifting alias weights and reading the deployment alarms, assumable by CodeDeploy only.',
      });
      groups.set(operation, group);
    }
    return groups;
  }
}
