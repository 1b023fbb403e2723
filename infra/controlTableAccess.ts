/**
 * What each function may do to the control table: read the API keys' partition, (listPets only)
 * read and create the cursor secret, and (createPet only) get, put and update its idempotency
 * records. Each statement is held to its partitions by the `dynamodb:LeadingKeys` condition, so
 * no function can reach another kind of record through these grants.
 */
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Route } from '../lib/routes.ts';
import { IDEMPOTENCY_KEY_PREFIX, controlKeys } from '../lib/table.ts';

const onlyPartition = (pk: string) => ({ 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [pk] } });

export function controlTableStatements(route: Route, controlTableArn: string): iam.PolicyStatement[] {
  const statements = [
    new iam.PolicyStatement({
      sid: 'ReadApiKeys',
      actions: ['dynamodb:Query'],
      resources: [controlTableArn],
      conditions: onlyPartition(controlKeys.apiKeys),
    }),
  ];
  if (route.usesCursorSecret) {
    statements.push(
      new iam.PolicyStatement({
        sid: 'CursorSecret',
        // PutItem only ever creates it (conditional put); nothing here can delete it.
        actions: ['dynamodb:GetItem', 'dynamodb:PutItem'],
        resources: [controlTableArn],
        conditions: onlyPartition(controlKeys.cursorSecret.pk),
      }),
    );
  }
  if (route.usesIdempotencyRecords) {
    statements.push(
      new iam.PolicyStatement({
        sid: 'IdempotencyRecords',
        actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
        resources: [controlTableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${IDEMPOTENCY_KEY_PREFIX}*`] } },
      }),
    );
  }
  return statements;
}
