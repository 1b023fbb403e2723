/**
 * Least privilege, proved both ways: which of a role's DynamoDB grants its calls used, and, for a
 * call IAM denied, the statement that would have allowed it. A grant is one action on one resource
 * of one Allow statement, with that statement's condition: `dynamodb:PutItem on PetsTable (Table)`.
 * A call used a grant when the grant alone, evaluated as IAM evaluates it (@cloud-copilot/iam-simulate),
 * allows the call: action x resource x condition, so a grant held to `cursor-secret` is not used by
 * a call on `apikeys`.
 */
import { runSimulation } from '@cloud-copilot/iam-simulate';
import type { DeployedEnvironment } from './intrinsics.ts';
import type { PolicyDocument, PolicyStatement } from './iamPolicy.ts';
import type { TableKeys } from './tables.ts';

/** One authorization a DynamoDB request needs: IAM evaluates each. */
export interface Check {
  action: string;
  resource: string;
  leadingKeys?: string[];
}

export interface Grant {
  /** `dynamodb:GetItem on ControlTable (CursorSecret)`: the action, the resource by its table, the statement's Sid. */
  name: string;
  action: string;
  /** The resource ARN (or pattern) the statement names. */
  resource: string;
  sid?: string;
  condition?: PolicyStatement['Condition'];
  /** Whether an allowed call was matched by this grant. */
  used: boolean;
  /** The grant alone, as a one-statement policy: what a call is evaluated against to tell whether it used it. */
  statement: PolicyStatement;
}

/** A gate's accounting: calls allowed and denied, and each DynamoDB grant of the role with whether a call used it. */
export interface GrantUsage {
  allowed: number;
  denied: number;
  grants: Grant[];
}

export interface Verdict {
  allowed: boolean;
  reason?: string;
}

/** The whole IAM evaluation of one check against a principal's identity policies. */
export async function evaluateCheck(
  policies: PolicyDocument[],
  check: Check,
  principal: string,
  env: DeployedEnvironment,
): Promise<Verdict> {
  const result = await runSimulation(
    {
      request: {
        principal,
        action: check.action,
        resource: { resource: check.resource, accountId: env.accountId },
        contextVariables: check.leadingKeys ? { 'dynamodb:LeadingKeys': check.leadingKeys } : {},
      },
      identityPolicies: policies.map((policy, index) => ({ name: `policy${index + 1}`, policy })),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    {},
  );
  if (result.resultType === 'error')
    return { allowed: false, reason: `simulation refused the request: ${result.errors.message}` };
  return result.overallResult === 'Allowed' ? { allowed: true } : { allowed: false, reason: result.overallResult };
}

/**
 * The DynamoDB grants of a role's policies, one per action x resource of each Allow statement. A
 * statement with NotAction or NotResource is one grant as written (it cannot be split).
 */
export function grantsOf(policies: PolicyDocument[], tables: TableKeys[]): Grant[] {
  const grants: Grant[] = [];
  for (const policy of policies) {
    for (const [index, statement] of asList(policy.Statement).entries()) {
      if (statement.Effect !== 'Allow') continue;
      const label = statement.Sid ?? `statement ${index + 1}`;
      const actions: (string | undefined)[] = statement.Action ? asList(statement.Action) : [undefined];
      const resources: (string | undefined)[] = statement.Resource ? asList(statement.Resource) : [undefined];
      for (const action of actions) {
        const actionName = action ?? `NotAction ${asList(statement.NotAction ?? []).join(',')}`;
        if (action !== undefined && !mayNameDynamoDb(action)) continue;
        for (const resource of resources) {
          const resourceArn = resource ?? `NotResource ${asList(statement.NotResource ?? []).join(',')}`;
          grants.push({
            name: `${actionName} on ${resourceName(resourceArn, tables)} (${label})`,
            action: actionName,
            resource: resourceArn,
            ...(statement.Sid ? { sid: statement.Sid } : {}),
            ...(statement.Condition ? { condition: statement.Condition } : {}),
            used: false,
            statement: {
              ...statement,
              ...(action ? { Action: action } : {}),
              ...(resource ? { Resource: resource } : {}),
            },
          });
        }
      }
    }
  }
  return grants;
}

/**
 * Marks the grants an allowed check used. Each grant not yet marked whose action and resource
 * patterns could match is evaluated alone against the check, so a warmed-up gate evaluates nothing.
 */
export async function markUsed(
  grants: Grant[],
  check: Check,
  principal: string,
  env: DeployedEnvironment,
): Promise<void> {
  for (const grant of grants) {
    if (grant.used) continue;
    if (grant.statement.Action && !patternMatches(grant.action, check.action, true)) continue;
    if (grant.statement.Resource && !patternMatches(grant.resource, check.resource, false)) continue;
    if (
      (await evaluateCheck([{ Version: '2012-10-17', Statement: [grant.statement] }], check, principal, env)).allowed
    ) {
      grant.used = true;
    }
  }
}

/** The least statement that allows a denied check: its action on its resource, held to its leading keys. */
export function wouldAllow(check: Check): PolicyStatement {
  return {
    Effect: 'Allow',
    Action: check.action,
    Resource: check.resource,
    ...(check.leadingKeys
      ? { Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': check.leadingKeys } } }
      : {}),
  };
}

/** A DynamoDB ARN by its table's logical id (without CDK's hash): `PetsTable/index/status-index`; anything else as is. */
export function resourceName(arn: string, tables: TableKeys[]): string {
  const match = /:table\/([^/]+)(\/.*)?$/.exec(arn);
  const table = match && tables.find((candidate) => candidate.tableName === match[1]);
  return table ? `${withoutHash(table.logicalId)}${match[2] ?? ''}` : arn;
}

/** `CreatePetFunctionA9DECA71` -> `CreatePetFunction`: CDK's 8-digit hash says nothing to a reader. */
export const withoutHash = (logicalId: string): string => logicalId.replace(/[0-9A-F]{8}$/, '');

function asList<T>(value: T | T[]): T[] {
  return Array.isArray(value) ? value : [value];
}

/** Whether an action pattern (`dynamodb:Get*`, `*`) can name a DynamoDB action. */
function mayNameDynamoDb(action: string): boolean {
  const head = action.split('*')[0]!.toLowerCase();
  return head.startsWith('dynamodb:') || (action.includes('*') && 'dynamodb:'.startsWith(head));
}

/** IAM's `*` and `?` wildcards; actions are case-insensitive, ARNs are not. */
function patternMatches(pattern: string, value: string, ignoreCase: boolean): boolean {
  const source = pattern
    .split('')
    .map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, ignoreCase ? 'i' : '').test(value);
}

// ---- The report ------------------------------------------------------------------------------

export interface GrantReport {
  grant: string;
  action: string;
  resource: string;
  sid?: string;
  condition?: PolicyStatement['Condition'];
  used: boolean;
  /** `file:line` of the statement in the app's code, when found. */
  source?: string;
}

export interface FunctionIamReport {
  /** The function's logical id without CDK's hash, e.g. `CreatePetFunction`. */
  function: string;
  role: string;
  /** Where the role's grants are written in the app's code. */
  writtenIn: string;
  allowed: number;
  denied: number;
  unusedGrants: string[];
  grants: GrantReport[];
}

export interface IamReport {
  stack: string;
  functions: FunctionIamReport[];
}

/** The grants of one function's usage, as reported (without the one-statement policies). */
export function grantReports(usage: GrantUsage, statementSources: Record<string, string>): GrantReport[] {
  return usage.grants.map(({ name, action, resource, sid, condition, used }) => ({
    grant: name,
    action,
    resource,
    ...(sid ? { sid } : {}),
    ...(condition ? { condition } : {}),
    used,
    ...(sid && statementSources[sid] ? { source: statementSources[sid] } : {}),
  }));
}

/** `IAM <function>: <n> call(s) allowed, <m> denied; unused grants: <none | list>`, one line per function. */
export function iamReportLines(report: IamReport): string[] {
  return report.functions.map((fn) => {
    const unused = fn.grants
      .filter((grant) => !grant.used)
      .map((grant) => (grant.source ? `${grant.grant} at ${grant.source}` : grant.grant));
    const calls = fn.allowed === 1 ? 'call' : 'calls';
    return `IAM ${fn.function}: ${fn.allowed} ${calls} allowed, ${fn.denied} denied; unused grants: ${unused.length ? unused.join(', ') : 'none'}`;
  });
}
