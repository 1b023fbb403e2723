/**
 * The one place that decides what each function may do: exactly what its route's `tableAccess`
 * says, on exactly the resources it touches, plus its records in the control table and its log
 * group. Nothing on "*".
 */
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Route, TableAccess } from '../../lib/domain/routes.ts';
import { LAST_USED_ATTRIBUTE } from '../../lib/store/controlTableKeys.ts';
import { CREATE_COUNT_ATTRIBUTE } from '../../lib/store/dailyCreates.ts';
import {
  CREATE_COUNT_KEY_PREFIX,
  IDEMPOTENCY_KEY_PREFIX,
  controlKeys,
  controlTable,
  petsTable,
} from '../../lib/store/table.ts';

/** The resources a function's statements may name. */
export interface FunctionResources {
  readonly tableArn: string;
  readonly controlTableArn: string;
  readonly logGroup: logs.ILogGroup;
}

export function functionStatements(route: Route, resources: FunctionResources): iam.PolicyStatement[] {
  const statusIndexArn = `${resources.tableArn}/index/${petsTable.statusIndex.indexName}`;
  return [
    ...tableStatements(route, resources.tableArn, statusIndexArn),
    ...controlTableStatements(route, resources.controlTableArn),
    writeLogsStatement(resources.logGroup),
  ];
}

const onlyPartition = (pk: string) => ({ 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [pk] } });

/**
 * What a function may do to the control table: read the API keys' partition, (listPets only) read
 * and create the cursor secret, and (createPet only) get, put and update its idempotency records
 * and raise its keys' daily create counts.
 * Each statement is held to its partitions by the `dynamodb:LeadingKeys` condition, so no function
 * can reach another kind of record through these grants.
 */
function controlTableStatements(route: Route, controlTableArn: string): iam.PolicyStatement[] {
  const statements = [readApiKeysStatement(controlTableArn)];
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
  if (route.usesDailyCreateCounts) statements.push(dailyCreateCountsStatement(controlTableArn));
  return statements;
}

/** The attributes a daily create count's UpdateItem may name. */
const CREATE_COUNT_ATTRIBUTES = [
  controlTable.partitionKey.name,
  controlTable.sortKey.name,
  CREATE_COUNT_ATTRIBUTE,
  controlTable.timeToLiveAttribute,
] as const;

/** Raise a key's count of the day (lib/store/dailyCreates.ts): one UpdateItem, its attributes only, returning nothing. */
const dailyCreateCountsStatement = (controlTableArn: string): iam.PolicyStatement =>
  new iam.PolicyStatement({
    sid: 'DailyCreateCounts',
    actions: ['dynamodb:UpdateItem'],
    resources: [controlTableArn],
    conditions: {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${CREATE_COUNT_KEY_PREFIX}*`] },
      'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...CREATE_COUNT_ATTRIBUTES] },
      StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
    },
  });

/** Query the API keys' partition, and nothing else of the control table. */
const readApiKeysStatement = (controlTableArn: string): iam.PolicyStatement =>
  new iam.PolicyStatement({
    sid: 'ReadApiKeys',
    actions: ['dynamodb:Query'],
    resources: [controlTableArn],
    conditions: onlyPartition(controlKeys.apiKeys),
  });

/**
 * The authorizer's whole grant: read the API keys, record when each was last used, write its logs.
 * No pets table. The record is an UpdateItem held to the `apikeys` partition and to the key item's
 * `lastUsedAt` (with its key attributes, which DynamoDB counts among a request's attributes), and
 * returning nothing: the authorizer can neither change a key's digest or expiry nor make a key.
 */
export function authorizerStatements(resources: Omit<FunctionResources, 'tableArn'>): iam.PolicyStatement[] {
  return [
    readApiKeysStatement(resources.controlTableArn),
    recordKeyUseStatement(resources.controlTableArn),
    writeLogsStatement(resources.logGroup),
  ];
}

/** The attributes the authorizer's UpdateItem may name. */
const KEY_USE_ATTRIBUTES = [controlTable.partitionKey.name, controlTable.sortKey.name, LAST_USED_ATTRIBUTE] as const;

const recordKeyUseStatement = (controlTableArn: string): iam.PolicyStatement =>
  new iam.PolicyStatement({
    sid: 'RecordKeyUse',
    actions: ['dynamodb:UpdateItem'],
    resources: [controlTableArn],
    conditions: {
      'ForAllValues:StringEquals': {
        'dynamodb:LeadingKeys': [controlKeys.apiKeys],
        'dynamodb:Attributes': [...KEY_USE_ATTRIBUTES],
      },
      StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
    },
  });

const writeLogsStatement = (logGroup: logs.ILogGroup): iam.PolicyStatement =>
  new iam.PolicyStatement({
    sid: 'WriteLogs',
    actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
    // The log group's ARN attribute ends in ":*", which covers its log streams.
    resources: [logGroup.logGroupArn],
  });

/**
 * The table statements for a route. Each action in `tableAccess` is granted on the table, except
 * Query for a route that `usesStatusIndex`: that route queries the status index only (the table's
 * key is a bare partition key, so a Query on the table itself would just be a GetItem).
 */
function tableStatements(route: Route, tableArn: string, statusIndexArn: string): iam.PolicyStatement[] {
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
