/** The functions and their least-privilege roles (infra/constructs/functions.ts, permissions.ts). */
import { describe, expect, it } from 'vitest';
import { STAGE_SETTINGS, STAGES } from '../../infra/stages.ts';
import { routes, type OperationName } from '../../lib/domain/routes.ts';
import { petsTable } from '../../lib/store/table.ts';
import type { SynthesizedStack } from './synth.ts';
import { asArray, functionOf, getAtt, props, ref, strings, synthesizedStages, type Json } from './templates.ts';

const of = synthesizedStages();

describe.each(STAGES)('PetStore-%s functions', (stage) => {
  const settings = STAGE_SETTINGS[stage];

  describe('functions', () => {
    it('has one function per route and the key authorizer (test/infra/authorizer.test.ts), and nothing else', () => {
      of(stage).template.resourceCountIs('AWS::Lambda::Function', routes.length + 1);
      expect([...of(stage).stack.functions.byOperation.keys()]).toEqual(routes.map((r) => r.operation));
    });

    it.each(routes.map((r) => [r.operation] as const))(
      '%s: runtime, architecture, handler, limits, tracing, logs',
      (operation) => {
        const s = of(stage);
        const { properties } = functionOf(s, operation);
        expect(properties).toMatchObject({
          Runtime: 'nodejs22.x',
          Architectures: ['arm64'],
          Handler: 'index.handler',
          MemorySize: settings.functionMemoryMiB,
          Timeout: settings.functionTimeout.toSeconds(),
          TracingConfig: { Mode: 'Active' },
        });
        const logGroup = s.resource((properties.LoggingConfig.LogGroup as { Ref: string }).Ref);
        expect(logGroup.Type).toBe('AWS::Logs::LogGroup');
        expect(props(logGroup).RetentionInDays).toBe(settings.logRetention);
      },
    );

    it.each(routes.map((r) => [r.operation] as const))('%s: environment', (operation) => {
      const s = of(stage);
      const tableId = s.logicalId(s.stack.table);
      // No NODE_OPTIONS: --enable-source-maps cost about 0.2x of the import on every cold start.
      const expected: Record<string, Json> = {
        TABLE_NAME: ref(tableId),
        CONTROL_TABLE_NAME: ref(s.logicalId(s.stack.controlTable)),
        STATUS_INDEX_SHARDS: String(STAGE_SETTINGS[stage].statusIndexShards),
      };
      expect(functionOf(s, operation).properties.Environment).toEqual({ Variables: expected });
    });
  });

  describe('IAM', () => {
    function roleOf(s: SynthesizedStack, operation: OperationName) {
      const { properties } = functionOf(s, operation);
      const roleId = (properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      return { roleId, role: props(s.resource(roleId)) as Record<string, any>, fn: properties };
    }

    /** Statements as comparable {actions, resource} pairs (one per resource). */
    function grants(statements: Record<string, any>[]) {
      return statements
        .flatMap((statement) => {
          expect(statement.Effect).toBe('Allow');
          expect(statement.NotAction ?? statement.NotResource).toBeUndefined();
          return asArray(statement.Resource).map((resource) => ({
            actions: asArray(statement.Action as string | string[]).sort(),
            resource: resource as Json,
            condition: (statement.Condition ?? null) as Json,
          }));
        })
        .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    }

    it.each(routes.map((r) => [r.operation] as const))('%s: exactly what its route needs', (operation) => {
      const s = of(stage);
      const { role, fn } = roleOf(s, operation);
      const tableId = s.logicalId(s.stack.table);
      const table = getAtt(tableId, 'Arn');
      const control = getAtt(s.logicalId(s.stack.controlTable), 'Arn');
      // Each control-table grant is held to its partitions: the keys, the cursor secret, idempotency records, create counts.
      const partition = (pk: string) => ({ 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [pk] } });
      const statusIndex = { 'Fn::Join': ['', [table, `/index/${petsTable.statusIndex.indexName}`]] };
      const logs = getAtt((fn.LoggingConfig.LogGroup as { Ref: string }).Ref, 'Arn');
      const common = [
        { actions: ['dynamodb:Query'], resource: control, condition: partition('apikeys') },
        { actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resource: logs },
      ];
      const expected = {
        listPets: [
          { actions: ['dynamodb:Query'], resource: statusIndex },
          { actions: ['dynamodb:Scan'], resource: table },
          {
            actions: ['dynamodb:GetItem', 'dynamodb:PutItem'],
            resource: control,
            condition: partition('cursor-secret'),
          },
        ],
        createPet: [
          { actions: ['dynamodb:GetItem', 'dynamodb:PutItem'], resource: table },
          {
            actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
            resource: control,
            condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['idempotency#*'] } },
          },
          // The daily create counts: one UpdateItem on their partitions, their attributes only, returning nothing.
          {
            actions: ['dynamodb:UpdateItem'],
            resource: control,
            condition: {
              'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['creates#*'] },
              'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', 'creates', 'expiresAt'] },
              StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
            },
          },
        ],
        getPet: [{ actions: ['dynamodb:GetItem'], resource: table }],
      }[operation];

      const statements = (role.Policies as { PolicyDocument: { Statement: Record<string, any>[] } }[]).flatMap(
        (policy) => policy.PolicyDocument.Statement,
      );
      expect(grants(statements)).toEqual(
        grants(
          [...expected, ...common].map((g) => ({
            Effect: 'Allow',
            Action: g.actions,
            Resource: g.resource,
            Condition: 'condition' in g ? g.condition : undefined,
          })),
        ),
      );
      // X-Ray's write actions accept no resource but "*": they come only from AWS's write-only policy.
      expect(role.ManagedPolicyArns).toEqual([
        { 'Fn::Join': ['', ['arn:', ref('AWS::Partition'), ':iam::aws:policy/AWSXRayDaemonWriteAccess']] },
      ]);
      expect(role.AssumeRolePolicyDocument.Statement).toEqual([
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
      ]);
    });

    it('has no "*" action or resource in any function policy, and no policy outside the roles', () => {
      const s = of(stage);
      const roleIds = routes.map((route) => roleOf(s, route.operation).roleId);
      const documents = roleIds.flatMap((roleId) =>
        (props(s.resource(roleId)).Policies as { PolicyDocument: { Statement: Record<string, any>[] } }[]).map(
          (p) => p.PolicyDocument,
        ),
      );
      const attached = s
        .ofType('AWS::IAM::Policy')
        .filter(([, policy]) => strings(props(policy).Roles).some((id) => roleIds.includes(id)));
      expect(attached).toEqual([]);
      const statements = documents.flatMap((document) => document.Statement);
      expect(statements.length).toBeGreaterThan(0);
      for (const statement of statements) {
        for (const action of strings(statement.Action)) expect(action).not.toContain('*');
        for (const resource of strings(statement.Resource)) expect(resource).not.toContain('*');
      }
    });
  });
});
