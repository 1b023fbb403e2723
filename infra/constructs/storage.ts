/**
 * What the stage keeps: the pets table and the control table (API keys, the cursor secret,
 * idempotency records), exactly as lib/store/table.ts defines them: the status index is keyed on
 * `statusShard`, whose shard count is configuration the functions get (./functions.ts), not part
 * of the index. Production retains both tables and protects them from deletion.
 */
import type { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { controlTable, petsTable } from '../../lib/store/table.ts';
import { IdTransparentGroup } from './idTransparentGroup.ts';

export interface StorageProps {
  /** Both tables refuse to be deleted (and keep their data). */
  readonly deletionProtection: boolean;
  /** What becomes of both tables when they leave the stack. */
  readonly removalPolicy: RemovalPolicy;
}

export class Storage extends IdTransparentGroup {
  readonly table: dynamodb.Table;
  /** Idempotency records, keys and secrets (lib/store/table.ts `controlTable`). */
  readonly controlTable: dynamodb.Table;

  constructor(scope: Construct, id: string, props: StorageProps) {
    super(scope, id);
    this.table = petsTableOf(this, props);
    this.controlTable = controlTableOf(this, props);
  }
}

function petsTableOf(scope: Construct, props: StorageProps): dynamodb.Table {
  const { partitionKey, statusIndex } = petsTable;
  const table = new dynamodb.Table(scope, 'PetsTable', {
    partitionKey: { name: partitionKey.name, type: attributeType(partitionKey.type) },
    ...tableDefaults(props),
  });
  table.addGlobalSecondaryIndex({
    indexName: statusIndex.indexName,
    partitionKey: { name: statusIndex.partitionKey.name, type: attributeType(statusIndex.partitionKey.type) },
    sortKey: { name: statusIndex.sortKey.name, type: attributeType(statusIndex.sortKey.type) },
    projectionType: statusIndex.projection === 'ALL' ? dynamodb.ProjectionType.ALL : dynamodb.ProjectionType.KEYS_ONLY,
  });
  return table;
}

/**
 * Expired records go by DynamoDB TTL. CloudFormation names it, like the pets table: a fixed name
 * would collide, on a redeploy after `cdk destroy`, with the table production retains. Tools find
 * it through the stack's ControlTableName output (`npm run keys` does).
 */
function controlTableOf(scope: Construct, props: StorageProps): dynamodb.Table {
  const { partitionKey, sortKey, timeToLiveAttribute } = controlTable;
  return new dynamodb.Table(scope, 'ControlTable', {
    partitionKey: { name: partitionKey.name, type: attributeType(partitionKey.type) },
    sortKey: { name: sortKey.name, type: attributeType(sortKey.type) },
    timeToLiveAttribute,
    ...tableDefaults(props),
  });
}

function tableDefaults({ deletionProtection, removalPolicy }: StorageProps) {
  return {
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    deletionProtection,
    removalPolicy,
  } satisfies Partial<dynamodb.TableProps>;
}

function attributeType(type: 'S' | 'N' | 'B'): dynamodb.AttributeType {
  const types = {
    S: dynamodb.AttributeType.STRING,
    N: dynamodb.AttributeType.NUMBER,
    B: dynamodb.AttributeType.BINARY,
  };
  return types[type];
}
