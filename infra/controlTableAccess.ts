/**
 * What each function may do to the control table: read the API keys' partition, and (listPets
 * only) read and create the cursor secret. Each statement is held to its partition by the
 * `dynamodb:LeadingKeys` condition, so no function can read idempotency records or another
 * kind of record through these grants.
 */
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Route } from '../lib/routes.ts';
import { controlKeys } from '../lib/table.ts';

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
  return statements;
}
