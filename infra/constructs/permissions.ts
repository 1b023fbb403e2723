/**
 * The one place that decides what each function may do: exactly what its route's `tableAccess`
 * says, on exactly the resources it touches, plus its API keys, its log group and (for cursor
 * operations) the cursor secret. Nothing on "*".
 */
import { ArnFormat, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { apiKeysPath } from '../../lib/parameterStoreKeys.ts';
import type { Route, TableAccess } from '../../lib/routes.ts';
import { petsTable } from '../../lib/table.ts';
import type { Stage } from '../stages.ts';

/** The resources a function's statements may name. */
export interface FunctionResources {
  readonly stage: Stage;
  readonly tableArn: string;
  readonly cursorSecretArn: string;
  readonly logGroup: logs.ILogGroup;
}

export function functionStatements(scope: Stack, route: Route, resources: FunctionResources): iam.PolicyStatement[] {
  const statusIndexArn = `${resources.tableArn}/index/${petsTable.statusIndex.indexName}`;
  const statements = tableStatements(route, resources.tableArn, statusIndexArn);
  statements.push(
    new iam.PolicyStatement({
      sid: 'ReadApiKeys',
      actions: ['ssm:GetParametersByPath'],
      resources: [
        scope.formatArn({
          service: 'ssm',
          resource: 'parameter',
          resourceName: apiKeysPath(resources.stage).slice(1),
          arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
        }),
      ],
    }),
    new iam.PolicyStatement({
      sid: 'WriteLogs',
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      // The log group's ARN attribute ends in ":*", which covers its log streams.
      resources: [resources.logGroup.logGroupArn],
    }),
  );
  if (route.usesCursorSecret) {
    statements.push(
      new iam.PolicyStatement({
        sid: 'ReadCursorSecret',
        actions: ['secretsmanager:GetSecretValue'],
        resources: [resources.cursorSecretArn],
      }),
    );
  }
  return statements;
}

/**
 * The table statements for a route. Each action in `tableAccess` is granted on the table, except
 * Query for a route that `usesStatusIndex`: that route queries the status index only (the table's
 * key is a bare partition key, so a Query on the table itself would just be a GetItem).
 */
export function tableStatements(route: Route, tableArn: string, statusIndexArn: string): iam.PolicyStatement[] {
  const onIndex = (action: TableAccess) => route.usesStatusIndex && action === 'dynamodb:Query';
  const indexActions = route.tableAccess.filter(onIndex);
  const tableActions = route.tableAccess.filter((action) => !onIndex(action));
  const statements: iam.PolicyStatement[] = [];
  if (tableActions.length > 0) {
    statements.push(new iam.PolicyStatement({ sid: 'Table', actions: [...tableActions], resources: [tableArn] }));
  }
  if (indexActions.length > 0) {
    statements.push(
      new iam.PolicyStatement({ sid: 'StatusIndex', actions: [...indexActions], resources: [statusIndexArn] }),
    );
  }
  return statements;
}
