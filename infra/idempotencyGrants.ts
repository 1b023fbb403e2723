/**
 * What createPet needs for its idempotency records (lib/idempotency.ts): the control table's name,
 * and GetItem/PutItem/UpdateItem on that table restricted by `dynamodb:LeadingKeys` to partition
 * keys starting `idempotency#`, so it can touch neither API keys nor the cursor secret there.
 * Other operations get nothing. The statements go into the role's one inline policy.
 */
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { OperationName } from '../lib/routes.ts';

export const IDEMPOTENCY_KEY_PREFIX = 'idempotency#';
const USES_IDEMPOTENCY: readonly OperationName[] = ['createPet'];

export function idempotencyStatements(operation: OperationName, controlTable: dynamodb.ITable): iam.PolicyStatement[] {
  if (!USES_IDEMPOTENCY.includes(operation)) return [];
  return [
    new iam.PolicyStatement({
      sid: 'IdempotencyRecords',
      actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      resources: [controlTable.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${IDEMPOTENCY_KEY_PREFIX}*`] } },
    }),
  ];
}

export function idempotencyEnvironment(operation: OperationName, controlTable: dynamodb.ITable): Record<string, string> {
  return USES_IDEMPOTENCY.includes(operation) ? { CONTROL_TABLE_NAME: controlTable.tableName } : {};
}
