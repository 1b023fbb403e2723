/**
 * What an AWS account and Region hold once for every stage: API Gateway's account setting that names
 * the CloudWatch Logs role API Gateway writes execution logs with (`AWS::ApiGateway::Account`, one per
 * account and Region, whoever sets it last wins). A stage stack that owned it would change what the
 * other stage uses on its deploy and leave it behind on its destroy; this stack owns it instead, and
 * both stage stacks depend on it (infra/stacks.ts), so `cdk deploy PetStore-<stage>` deploys it first
 * when it is missing or changed, and a stage's deploy or destroy never touches it.
 */
import { RemovalPolicy, Stack, Tags, Validations, type StackProps } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';

export class PetStoreAccountStack extends Stack {
  readonly cloudWatchRole: iam.Role;
  readonly apiGatewayAccount: apigw.CfnAccount;

  constructor(scope: Construct, id: string, props: StackProps = {}) {
    super(scope, id, props);
    Tags.of(this).add('service', 'petstore');
    this.cloudWatchRole = new iam.Role(this, 'ApiGatewayCloudWatchRole', {
      assumedBy: new iam.ServicePrincipal('apigateway.amazonaws.com'),
      description:
        "API Gateway's account-wide role for writing execution logs (every Pet Store stage logs errors through it)",
      managedPolicies: [
        iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs'),
      ],
    });
    Validations.of(this.cloudWatchRole).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason:
        "The account-level role API Gateway uses to write execution logs (APIG6); AWS's service-role " +
        'policy is the documented grant for it, and the role is assumable by API Gateway only.',
    });
    this.apiGatewayAccount = new apigw.CfnAccount(this, 'ApiGatewayAccount', {
      cloudWatchRoleArn: this.cloudWatchRole.roleArn,
    });
    // Kept when this stack is destroyed: another stage, or another service in the account, may log through them.
    for (const resource of [this.cloudWatchRole, this.apiGatewayAccount])
      resource.applyRemovalPolicy(RemovalPolicy.RETAIN);
  }
}
