/**
 * How a new version reaches traffic. Every function, the key authorizer included, is published as a
 * version behind the alias `live`, which the API invokes. In a stage with `canaryDeploys`
 * (production) a CodeDeploy deployment group per function shifts 10% of traffic to the new version
 * for 5 minutes, then the rest, and rolls back by itself when one of the function's alarms fires;
 * elsewhere (staging) the alias moves to the new version at once.
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

/** What is deployed behind an alias: an operation's function, or the key authorizer. */
export type Deployed = OperationName | 'authorizer';

export interface DeploymentProps {
  /** Shift traffic by CodeDeploy canaries, rolled back on alarm, rather than all at once. */
  readonly canaryDeploys: boolean;
  readonly functions: Functions;
}

export class Deployment extends IdTransparentGroup {
  readonly #aliases = new Map<Deployed, lambda.Alias>();
  /** Empty unless the stage deploys by canary. */
  readonly #groups = new Map<Deployed, codedeploy.LambdaDeploymentGroup>();
  readonly #application: codedeploy.LambdaApplication | undefined;

  constructor(scope: Construct, id: string, { canaryDeploys, functions }: DeploymentProps) {
    super(scope, id);
    this.#application = canaryDeploys ? new codedeploy.LambdaApplication(this, 'Deploys') : undefined;
    for (const [operation, { fn }] of functions.byOperation) this.publish(operation, fn);
  }

  /** Every alias, operations first (in the order of `routes`), then the authorizer's once published. */
  get aliases(): ReadonlyMap<Deployed, lambda.Alias> {
    return this.#aliases;
  }

  /** Every canary's deployment group; empty unless the stage deploys by canary. */
  get groups(): ReadonlyMap<Deployed, codedeploy.LambdaDeploymentGroup> {
    return this.#groups;
  }

  /** Publishes `fn` behind the alias `live` (by canary where the stage says so); returns the alias, which callers invoke. */
  publish(name: Deployed, fn: lambda.Function): lambda.Alias {
    if (this.#aliases.has(name)) throw new Error(`${name} is already published`);
    const alias = new lambda.Alias(this, `${pascal(name)}LiveAlias`, {
      aliasName: LIVE_ALIAS,
      version: fn.currentVersion,
    });
    this.#aliases.set(name, alias);
    if (this.#application) this.#groups.set(name, this.#canary(name, alias, this.#application));
    return alias;
  }

  alias(name: Deployed): lambda.Alias {
    const found = this.#aliases.get(name);
    if (!found) throw new Error(`No alias for ${name}`);
    return found;
  }

  /** The alarms that roll a canary of `name` back. */
  rollBackOn(name: Deployed, alarms: readonly cloudwatch.IAlarm[]): void {
    for (const alarm of alarms) this.#groups.get(name)?.addAlarm(alarm);
  }

  #canary(name: Deployed, alias: lambda.Alias, application: codedeploy.LambdaApplication) {
    const group = new codedeploy.LambdaDeploymentGroup(this, `${pascal(name)}Canary`, {
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
    return group;
  }
}
