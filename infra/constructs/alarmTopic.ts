/**
 * Where a stage's alarms go: its SNS topic (TLS only), the `AlarmEmail` parameter that subscribes an
 * address at deploy time (required where the stage settings say so), the settings' `alarmEmails`,
 * and the existing topics of `alarmTopicArns`. Made in the monitoring construct's scope
 * (./monitoring.ts), so their logical ids are the ones they always had.
 */
import { CfnCondition, CfnParameter, Fn, Stack, Validations } from 'aws-cdk-lib';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import type { Stage } from '../stages.ts';

/** Who gets a stage's alarms besides the `AlarmEmail` parameter's address. */
export interface AlarmSubscribers {
  /** The `AlarmEmail` parameter must be given unless `alarmEmails` or `alarmTopicArns` name someone. */
  readonly requireAlarmSubscriber: boolean;
  readonly alarmEmails: readonly string[];
  /** Existing SNS topics, at most 4. */
  readonly alarmTopicArns: readonly string[];
}

/** The stack parameter that subscribes an address to the alarms at deploy time. */
export const ALARM_EMAIL_PARAMETER = 'AlarmEmail';
/** An e-mail address, loosely (SNS checks it for real: the address must confirm the subscription). */
const EMAIL_PATTERN = '[^@\\s]+@[^@\\s]+\\.[^@\\s]+';
/** CloudWatch takes at most 5 actions per alarm state: the stage topic and 4 more. */
const MAX_EXTRA_TOPICS = 4;

export function alarmTopic(scope: Construct, stage: Stage, { alarmEmails }: AlarmSubscribers): sns.Topic {
  const topic = new sns.Topic(scope, 'AlarmTopic', { displayName: `Pet Store ${stage} alarms`, enforceSSL: true });
  for (const email of alarmEmails) {
    if (!new RegExp(`^${EMAIL_PATTERN}$`).test(email))
      throw new Error(`alarmEmails of ${stage}: "${email}" is not an e-mail address`);
    topic.addSubscription(new EmailSubscription(email));
  }
  Validations.of(topic).acknowledge({
    id: 'AwsSolutions-SNS2',
    reason:
      'The topic carries only alarm state changes (alarm names, metric values), no data of the service. ' +
      'CloudWatch cannot publish to a topic encrypted with the AWS-managed SNS key, and a customer key ' +
      '(with a key policy for CloudWatch) costs more than the notifications are worth protecting.',
  });
  return topic;
}

/**
 * A deploy-time subscriber, so that no address need be committed. Where the stage requires a
 * subscriber and `alarmEmails` and `alarmTopicArns` name none, the parameter has no default: CloudFormation (and `cdk
 * deploy` before it) refuses to deploy without a value, and the pattern refuses an empty one. A
 * synth needs no value, so tests and newcomers never give one.
 */
export function alarmEmailParameter(
  scope: Construct,
  stage: Stage,
  { requireAlarmSubscriber, alarmEmails, alarmTopicArns }: AlarmSubscribers,
  topic: sns.ITopic,
): CfnParameter {
  const required = requireAlarmSubscriber && alarmEmails.length === 0 && alarmTopicArns.length === 0;
  const parameter = new CfnParameter(scope, ALARM_EMAIL_PARAMETER, {
    type: 'String',
    description:
      `E-mail address that gets the ${stage} alarms (it must confirm the subscription once). ` +
      (required
        ? `Required: cdk deploy ${Stack.of(scope).stackName} --parameters ${ALARM_EMAIL_PARAMETER}=ops@example.com (later deploys keep it).`
        : 'Optional: empty for none.'),
    allowedPattern: required ? `^${EMAIL_PATTERN}$` : `^(${EMAIL_PATTERN})?$`,
    constraintDescription: required
      ? `must be the e-mail address that gets the ${stage} alarms, e.g. --parameters ${ALARM_EMAIL_PARAMETER}=ops@example.com`
      : 'must be an e-mail address, or empty',
    ...(required ? {} : { default: '' }),
  });
  const subscription = new sns.Subscription(scope, `${ALARM_EMAIL_PARAMETER}Subscription`, {
    topic,
    protocol: sns.SubscriptionProtocol.EMAIL,
    endpoint: parameter.valueAsString,
  });
  if (!required) {
    const given = new CfnCondition(scope, `${ALARM_EMAIL_PARAMETER}Given`, {
      expression: Fn.conditionNot(Fn.conditionEquals(parameter.valueAsString, '')),
    });
    (subscription.node.defaultChild as sns.CfnSubscription).cfnOptions.condition = given;
  }
  return parameter;
}

/** The existing topics of `alarmTopicArns`, imported (never created or changed by this stack). */
export function extraTopics(scope: Construct, stage: Stage, { alarmTopicArns }: AlarmSubscribers): sns.ITopic[] {
  if (alarmTopicArns.length > MAX_EXTRA_TOPICS) {
    throw new Error(
      `alarmTopicArns of ${stage}: at most ${MAX_EXTRA_TOPICS} topics (CloudWatch takes 5 actions per alarm)`,
    );
  }
  return alarmTopicArns.map((arn, index) => sns.Topic.fromTopicArn(scope, `AlarmTopic${index + 1}`, arn));
}
