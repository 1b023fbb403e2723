/**
 * The policies each stack's CDK bootstrap is given (docs/deploying.md "Who may do what"), made from the
 * synthesized cloud assembly alone: `npm run synth` writes them to cdk.out/.
 *
 * - The CloudFormation execution policy (`cdk bootstrap --cloudformation-execution-policies`): for every
 *   resource type in the stack's template, what ./resourceActions.ts says CloudFormation needs for it,
 *   on the stack's own resources where AWS names them; IAM only on the stack's own roles
 *   (`role/<stack>-*`), given only the AWS managed policies the template names, passed only to the
 *   services the template's roles trust. A type the table lacks is refused, by name.
 * - The bootstrap roles' permissions boundary (`--custom-permissions-boundary`, applied to all of the
 *   qualifier's roles): whatever their own policies allow, but nothing on the other stacks of the app
 *   nor with the other qualifiers' roles. The bootstrap deploy role may otherwise act on every stack of
 *   the account, and a stack keeps the execution role it was deployed with, so without it one stage's
 *   deploy role could change another stage's stack.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESOURCE_ACTIONS, UNSCOPED_ACTIONS } from './resourceActions.ts';

interface PolicyStatement {
  Sid: string;
  Effect: 'Allow' | 'Deny';
  Action: string | string[];
  Resource: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}
export interface PolicyDocument {
  Version: '2012-10-17';
  Statement: PolicyStatement[];
}

interface Resource {
  Type: string;
  Properties?: Record<string, unknown>;
}
export interface StackTemplate {
  Resources: Record<string, Resource>;
}
/** A stack of the cloud assembly, as its manifest and template say. */
export interface AssemblyStack {
  stackName: string;
  qualifier: string;
  template: StackTemplate;
}

interface Manifest {
  artifacts: Record<
    string,
    { type: string; properties?: { templateFile?: string; stackName?: string; assumeRoleArn?: string } }
  >;
}

/** Every stack of the cloud assembly in `outdir`, with the bootstrap qualifier its deploy role names. */
export function assemblyStacks(outdir: string): AssemblyStack[] {
  const manifest = JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8')) as Manifest;
  return Object.entries(manifest.artifacts)
    .filter(([, artifact]) => artifact.type === 'aws:cloudformation:stack' && artifact.properties?.templateFile)
    .map(([id, { properties }]) => {
      const qualifier = /role\/cdk-([a-z0-9_-]+)-deploy-role-/.exec(properties?.assumeRoleArn ?? '')?.[1];
      if (!qualifier) throw new Error(`${id}: no bootstrap deploy role in the cloud assembly's manifest`);
      return {
        stackName: properties?.stackName ?? id,
        qualifier,
        template: JSON.parse(readFileSync(join(outdir, properties!.templateFile!), 'utf8')) as StackTemplate,
      };
    });
}

/** The resource types of the template that ./resourceActions.ts does not cover. */
export const uncoveredTypes = (template: StackTemplate): string[] =>
  [...new Set(Object.values(template.Resources).map((resource) => resource.Type))]
    .filter((type) => !RESOURCE_ACTIONS[type])
    .sort();

const sidOf = (type: string) => type.replace(/^AWS::/, '').replaceAll('::', '');

/** A managed policy ARN as the template writes it, with the partition (`aws`) filled in. */
function managedPolicyArn(value: unknown, stackName: string): string {
  if (typeof value === 'string') return value;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  const parts = join?.[1].map((part) =>
    typeof part === 'string' ? part : (part as { Ref?: string }).Ref === 'AWS::Partition' ? 'aws' : undefined,
  );
  if (!join || parts?.includes(undefined))
    throw new Error(`${stackName}: cannot read the managed policy ARN ${JSON.stringify(value)}`);
  return parts!.join(join[0]);
}

/** The AWS managed policies the template's roles are given, and the services they trust. */
function roleFacts({ stackName, template }: AssemblyStack) {
  const roles = Object.values(template.Resources).filter((resource) => resource.Type === 'AWS::IAM::Role');
  const policies = roles.flatMap((role) =>
    ((role.Properties?.ManagedPolicyArns as unknown[] | undefined) ?? []).map((arn) =>
      managedPolicyArn(arn, stackName),
    ),
  );
  const services = roles.flatMap((role) =>
    (
      (role.Properties?.AssumeRolePolicyDocument as { Statement: { Principal?: { Service?: string | string[] } }[] })
        ?.Statement ?? []
    ).flatMap((statement) => [statement.Principal?.Service ?? []].flat()),
  );
  return { policies: [...new Set(policies)].sort(), services: [...new Set(services)].sort() };
}

const fill = (pattern: string, { stackName, qualifier }: AssemblyStack) =>
  pattern
    .replaceAll('{stack}', stackName)
    .replaceAll('{lower}', stackName.toLowerCase())
    .replaceAll('{qualifier}', qualifier);

/** The stack's CloudFormation execution policy; throws naming every resource type it cannot cover. */
export function executionPolicy(stack: AssemblyStack): PolicyDocument {
  const uncovered = uncoveredTypes(stack.template);
  if (uncovered.length > 0)
    throw new Error(
      `${stack.stackName}: no execution-policy grants for ${uncovered.join(', ')} (add them to tools/policies/resourceActions.ts)`,
    );
  const types = [...new Set(Object.values(stack.template.Resources).map((resource) => resource.Type))].sort();
  // One statement per set of resources, its actions the union of every type's that names them.
  const byResources = new Map<string, { sid: string; actions: Set<string>; resources: string[] }>();
  for (const type of types)
    for (const grant of RESOURCE_ACTIONS[type]!) {
      const resources = [...new Set(grant.resources.map((pattern) => fill(pattern, stack)))].sort();
      const key = resources.join(' ');
      const entry = byResources.get(key) ?? { sid: sidOf(type), actions: new Set<string>(), resources };
      for (const action of grant.actions) entry.actions.add(action);
      byResources.set(key, entry);
    }
  // Then one statement per set of actions, its resources the union (a managed policy holds 6,144 characters).
  const byActions = new Map<string, { sid: string; actions: string[]; resources: string[] }>();
  for (const { sid, actions, resources } of byResources.values()) {
    const sorted = [...actions].sort();
    const key = sorted.join(' ');
    const entry = byActions.get(key) ?? { sid, actions: sorted, resources: [] };
    entry.resources = [...new Set([...entry.resources, ...resources])].sort();
    byActions.set(key, entry);
  }
  const statements: PolicyStatement[] = [...byActions.values()].map(({ sid, actions, resources }) => ({
    Sid: sid,
    Effect: 'Allow',
    Action: actions.length === 1 ? actions[0]! : actions,
    Resource: resources.length === 1 ? resources[0]! : resources,
  }));
  const unscoped = [...new Set(types.flatMap((type) => UNSCOPED_ACTIONS[type] ?? []))].sort();
  if (unscoped.length > 0)
    statements.push({ Sid: 'NoResourceLevel', Effect: 'Allow', Action: unscoped, Resource: '*' });
  const { policies, services } = roleFacts(stack);
  const roles = fill('arn:aws:iam::<account>:role/{stack}-*', stack);
  if (policies.length > 0)
    statements.push({
      Sid: 'RolesManagedPolicies',
      Effect: 'Allow',
      Action: ['iam:AttachRolePolicy', 'iam:DetachRolePolicy'],
      Resource: roles,
      Condition: { ArnEquals: { 'iam:PolicyARN': policies } },
    });
  if (services.length > 0)
    statements.push({
      Sid: 'PassRolesToTheirServices',
      Effect: 'Allow',
      Action: 'iam:PassRole',
      Resource: roles,
      Condition: { StringEquals: { 'iam:PassedToService': services } },
    });
  return { Version: '2012-10-17', Statement: statements };
}

/** IAM's limit on a customer managed policy: characters, whitespace not counted. */
export const MANAGED_POLICY_MAX_CHARACTERS = 6144;

/** A policy's size as IAM counts it once filled, with the longest account id and Region names. */
export const filledSize = (policy: PolicyDocument): number =>
  JSON.stringify(policy).replaceAll('<account>', '123456789012').replaceAll('<region>', 'ap-southeast-5').length;

/**
 * The execution policy in as few managed policies as IAM's size limit allows (`cdk bootstrap
 * --cloudformation-execution-policies` takes several, comma-separated), statements kept whole.
 */
export function executionPolicies(stack: AssemblyStack): PolicyDocument[] {
  const parts: PolicyDocument[] = [];
  for (const statement of executionPolicy(stack).Statement) {
    const last = parts.at(-1);
    if (last && filledSize({ ...last, Statement: [...last.Statement, statement] }) <= MANAGED_POLICY_MAX_CHARACTERS)
      last.Statement.push(statement);
    else parts.push({ Version: '2012-10-17', Statement: [statement] });
  }
  return parts;
}

/** The boundary of `stack`'s bootstrap roles: nothing on the app's other stacks, nor with their bootstrap roles. */
export function bootstrapBoundary(stack: AssemblyStack, all: readonly AssemblyStack[]): PolicyDocument {
  const others = all.filter((other) => other.stackName !== stack.stackName);
  return {
    Version: '2012-10-17',
    Statement: [
      // A boundary only limits: what the roles' own policies allow stays theirs.
      { Sid: 'WhatTheRolesOwnPoliciesAllow', Effect: 'Allow', Action: '*', Resource: '*' },
      {
        Sid: 'NotTheOtherStacks',
        Effect: 'Deny',
        Action: 'cloudformation:*',
        Resource: others.map((other) => `arn:aws:cloudformation:<region>:<account>:stack/${other.stackName}/*`),
      },
      {
        Sid: 'NotTheOtherStacksBootstrapRoles',
        Effect: 'Deny',
        Action: ['iam:PassRole', 'sts:AssumeRole'],
        Resource: others.map((other) => `arn:aws:iam::<account>:role/cdk-${other.qualifier}-*`),
      },
    ],
  };
}

/** The file names of a stack's policies in the cloud assembly directory (execution policy part `n`, from 1). */
const policyFiles = {
  execution: (stackName: string, n: number) => `${stackName}.execution-policy-${n}.json`,
  boundary: (stackName: string) => `${stackName}.bootstrap-boundary.json`,
};

/** Writes every stack's execution policy parts and bootstrap boundary into `outdir`; returns the files written. */
export function writeStackPolicies(outdir: string): string[] {
  const stacks = assemblyStacks(outdir);
  // Parts of an earlier synth would otherwise be taken for parts of this one.
  for (const file of readdirSync(outdir).filter((name) => /\.execution-policy-\d+\.json$/.test(name)))
    rmSync(join(outdir, file));
  return stacks.flatMap((stack) => {
    const written: [string, PolicyDocument][] = [
      ...executionPolicies(stack).map(
        (part, i) => [join(outdir, policyFiles.execution(stack.stackName, i + 1)), part] as [string, PolicyDocument],
      ),
      [join(outdir, policyFiles.boundary(stack.stackName)), bootstrapBoundary(stack, stacks)],
    ];
    for (const [file, policy] of written) writeFileSync(file, `${JSON.stringify(policy, null, 2)}\n`);
    return written.map(([file]) => file);
  });
}
