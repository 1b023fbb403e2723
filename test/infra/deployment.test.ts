/**
 * Deployment (infra/constructs/deployment.ts): every function, the key authorizer's included, behind
 * a `live` alias on a published version; production shifts traffic by CodeDeploy canary and rolls
 * back on its alarms; staging moves the alias at once.
 */
import { describe, expect, it } from 'vitest';
import type { Deployed } from '../../infra/constructs/deployment.ts';
import { STAGES } from '../../infra/stages.ts';
import { routes } from '../../lib/domain/routes.ts';
import type { SynthesizedStack } from './synth.ts';
import { functionOf, props, ref, synthesizedStages } from './templates.ts';

const of = synthesizedStages();

/** Every function the stage deploys: each operation's, then the key authorizer's. */
const deployed: readonly Deployed[] = [...routes.map((route) => route.operation), 'authorizer'];

const functionIdOf = (s: SynthesizedStack, name: Deployed): string =>
  name === 'authorizer' ? s.logicalId(s.stack.keyAuthorizer.fn) : functionOf(s, name).logicalId;

describe.each(STAGES)('PetStore-%s deployment', (stage) => {
  it('publishes each function, the key authorizer included, as a version behind the alias "live"', () => {
    const s = of(stage);
    s.template.resourceCountIs('AWS::Lambda::Alias', deployed.length);
    s.template.resourceCountIs('AWS::Lambda::Version', deployed.length);
    for (const name of deployed) {
      const alias = props(s.resource(s.logicalId(s.stack.deployment.alias(name)))) as Record<string, any>;
      const fnId = functionIdOf(s, name);
      expect(alias.Name).toBe('live');
      expect(alias.FunctionName).toEqual(ref(fnId));
      const versionId = (alias.FunctionVersion as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      expect(s.resource(versionId).Type).toBe('AWS::Lambda::Version');
      expect(props(s.resource(versionId)).FunctionName).toEqual(ref(fnId));
    }
  });
});

describe('PetStore-production deployment', () => {
  it('shifts traffic to each new version by CodeDeploy canary: 10% for 5 minutes, then all', () => {
    const s = of('production');
    s.template.resourceCountIs('AWS::CodeDeploy::Application', 1);
    s.template.resourceCountIs('AWS::CodeDeploy::DeploymentGroup', deployed.length);
    s.template.hasResourceProperties('AWS::CodeDeploy::Application', { ComputePlatform: 'Lambda' });
    for (const name of deployed) {
      const aliasId = s.logicalId(s.stack.deployment.alias(name));
      const alias = s.resource(aliasId) as Record<string, any>;
      const groupId = s.logicalId(s.stack.deployment.groups.get(name)!);
      expect(alias.UpdatePolicy).toEqual({
        CodeDeployLambdaAliasUpdate: {
          ApplicationName: ref(s.ofType('AWS::CodeDeploy::Application')[0]![0]),
          DeploymentGroupName: ref(groupId),
        },
      });
      const group = props(s.resource(groupId)) as Record<string, any>;
      expect(group.DeploymentConfigName).toBe('CodeDeployDefault.LambdaCanary10Percent5Minutes');
      expect(group.DeploymentStyle).toEqual({ DeploymentOption: 'WITH_TRAFFIC_CONTROL', DeploymentType: 'BLUE_GREEN' });
      expect(group.AutoRollbackConfiguration).toEqual({
        Enabled: true,
        Events: expect.arrayContaining([
          'DEPLOYMENT_FAILURE',
          'DEPLOYMENT_STOP_ON_REQUEST',
          'DEPLOYMENT_STOP_ON_ALARM',
        ]),
      });
    }
  });

  it("rolls a canary back when the API's 5xx rate, or the operation's latency, errors or duration alarm fires", () => {
    const s = of('production');
    const alarmName = (name: string) => ref(s.logicalId(s.stack.monitoring.alarms.get(`${name}Alarm`)!));
    for (const route of routes) {
      const name = route.operation[0]!.toUpperCase() + route.operation.slice(1);
      const group = props(s.resource(s.logicalId(s.stack.deployment.groups.get(route.operation)!))) as Record<
        string,
        any
      >;
      expect(group.AlarmConfiguration.Enabled).toBe(true);
      expect(group.AlarmConfiguration.Alarms.map((a: { Name: unknown }) => a.Name)).toEqual([
        alarmName('Api5xxRate'),
        alarmName(`${name}LatencyP99`),
        alarmName(`${name}Errors`),
        alarmName(`${name}Duration`),
      ]);
    }
  });

  it("rolls the key authorizer's canary back when the API's 5xx rate, its failures or duration, or the 401s alarm", () => {
    const s = of('production');
    const alarmName = (name: string) => ref(s.logicalId(s.stack.monitoring.alarms.get(`${name}Alarm`)!));
    const group = props(s.resource(s.logicalId(s.stack.deployment.groups.get('authorizer')!))) as Record<string, any>;
    expect(group.AlarmConfiguration.Enabled).toBe(true);
    expect(group.AlarmConfiguration.Alarms.map((a: { Name: unknown }) => a.Name)).toEqual([
      alarmName('Api5xxRate'),
      alarmName('AuthorizerFailures'),
      alarmName('AuthorizerDuration'),
      alarmName('Unauthorized'),
    ]);
  });
});

describe('PetStore-staging deployment', () => {
  it('moves the alias at once: no CodeDeploy', () => {
    const s = of('staging');
    s.template.resourceCountIs('AWS::CodeDeploy::Application', 0);
    s.template.resourceCountIs('AWS::CodeDeploy::DeploymentGroup', 0);
    for (const [, alias] of s.ofType('AWS::Lambda::Alias')) expect(alias.UpdatePolicy).toBeUndefined();
  });
});
