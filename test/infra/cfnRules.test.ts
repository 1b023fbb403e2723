/**
 * The synthesized stages judged by CloudFormation's rules, not by our own assertions: no dependency
 * cycle (CloudFormation refuses such a template before creating anything), and cfn-lint without errors.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STAGES } from '../../infra/stages.ts';
import { ACCEPTED_CFN_LINT_FINDINGS } from '../../infra/cfnLintAcceptance.ts';
import { CFN_LINT_INSTALL_HINT, cfnLintVersion, runCfnLint, type CfnLintFinding } from './cfnLint.ts';
import { dependencyGraph, findCycles, references, type TemplateLike } from './dependencyGraph.ts';
import { Template } from 'aws-cdk-lib/assertions';
import { ACCOUNT_STACK_NAME } from '../../infra/names.ts';
import { testApp } from './synth.ts';
import { synthesizedStages } from './templates.ts';

const stage = synthesizedStages();
const cyclesOf = (template: TemplateLike) => findCycles(dependencyGraph(template)).map((cycle) => cycle.join(' -> '));

describe('dependency graph', () => {
  it.each(STAGES)('%s has no dependency cycle', (name) => {
    expect(cyclesOf(stage(name).json)).toEqual([]);
  });

  it('reads Ref, Fn::GetAtt (both forms), Fn::Sub (not ${!literals}, not its own variables) and pseudo parameters', () => {
    expect(
      references({
        a: { Ref: 'A' },
        b: { 'Fn::GetAtt': ['B', 'Arn'] },
        c: { 'Fn::GetAtt': 'C.Arn' },
        d: { 'Fn::Sub': 'x-${D}-${E.Arn}-${!NotARef}-${AWS::Region}' },
        f: { 'Fn::Sub': ['${Local}-${F}', { Local: { Ref: 'G' } }] },
      }),
    ).toEqual(['A', 'B', 'C', 'D', 'E', 'AWS::Region', 'F', 'G']);
  });

  it('names the cycle a Ref from the 5xx alarm to the stage would close in production (the one we cut)', () => {
    const template = structuredClone(stage('production').json) as TemplateLike & { Resources: Record<string, any> };
    const [stageId] = Object.entries(template.Resources).find(([, r]) => r.Type === 'AWS::ApiGateway::Stage')!;
    const [, alarm] = Object.entries(template.Resources).find(
      ([, r]) => r.Properties?.AlarmName === 'petstore-production-Api5xxRate',
    )!;
    const metric = (alarm.Properties.Metrics as any[]).find((m) => m.MetricStat)!.MetricStat.Metric;
    metric.Dimensions = metric.Dimensions.map((d: { Name: string }) =>
      d.Name === 'Stage' ? { Name: 'Stage', Value: { Ref: stageId } } : d,
    );
    const cycles = cyclesOf(template);
    expect(cycles).toHaveLength(1);
    expect(cycles[0]).toMatch(/Alias.*Canary.*Api5xxRateAlarm.*Stage|Api5xxRateAlarm.*Stage.*Alias.*Canary/);
  });

  it('sees edges in DependsOn, UpdatePolicy and CreationPolicy', () => {
    const template: TemplateLike = {
      Resources: {
        A: { DependsOn: 'B' },
        B: { UpdatePolicy: { X: { Ref: 'C' } } },
        C: { CreationPolicy: { Y: { 'Fn::GetAtt': ['A', 'Id'] } } },
        D: { Properties: { Z: { Ref: 'D' } } },
      },
    };
    expect(cyclesOf(template)).toEqual(['A -> B -> C -> A', 'D -> D']);
  });
});

describe('cfn-lint', () => {
  const version = cfnLintVersion();
  const missing = version === undefined;
  if (missing && process.env.CI) {
    it('is installed (CI runs it for real)', () => {
      throw new Error(CFN_LINT_INSTALL_HINT);
    });
    return;
  }
  if (missing) console.warn(`Skipping the cfn-lint checks. ${CFN_LINT_INSTALL_HINT}`);

  // One cfn-lint run for all templates (it takes seconds per run): both stages and a broken copy.
  const dir = mkdtempSync(join(tmpdir(), 'cfn-lint-'));
  const findings = new Map<string, CfnLintFinding[]>();
  const brokenTable = { id: '' };
  const brokenTopic = { id: '' };
  beforeAll(() => {
    if (missing) return;
    const templates = new Map<string, { Resources: Record<string, { Type: string; Properties?: unknown }> }>(
      STAGES.map((name) => [name, stage(name).json]),
    );
    templates.set(ACCOUNT_STACK_NAME, Template.fromStack(testApp({ stages: [] }).account).toJSON() as never);
    // A broken copy: a required property gone, and an unknown one on a resource no acceptance covers.
    const broken = structuredClone(stage('staging').json);
    brokenTable.id = Object.entries(broken.Resources).find(([, r]) => r.Type === 'AWS::DynamoDB::Table')![0];
    brokenTopic.id = Object.entries(broken.Resources).find(([, r]) => r.Type === 'AWS::SNS::Topic')![0];
    delete (broken.Resources[brokenTable.id]!.Properties as Record<string, unknown>).KeySchema;
    (broken.Resources[brokenTopic.id]!.Properties as Record<string, unknown>).Colour = 'blue';
    templates.set('broken', broken);
    const files = new Map([...templates.keys()].map((name) => [join(dir, `${name}.template.json`), name]));
    for (const [file, name] of files) writeFileSync(file, JSON.stringify(templates.get(name), null, 1));
    for (const name of templates.keys()) findings.set(name, []);
    for (const finding of runCfnLint([...files.keys()])) {
      if (finding.Level === 'Error') findings.get(files.get(finding.Filename)!)!.push(finding);
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.skipIf(missing).each([...STAGES, ACCOUNT_STACK_NAME])(
    '%s has no cfn-lint error (the accepted ones are set in the template itself)',
    (name) => {
      expect(findings.get(name)!.map((e) => `${e.Rule.Id} ${e.Location.Path.join('/')}: ${e.Message}`)).toEqual([]);
    },
  );

  it.skipIf(missing)('still reports a real error (the check can fail)', () => {
    expect(
      findings
        .get('broken')!
        .map((e) => `${e.Rule.Id} ${e.Location.Path.join('/')}`)
        .sort(),
    ).toEqual(
      [`E3002 Resources/${brokenTopic.id}/Properties/Colour`, `E3003 Resources/${brokenTable.id}/Properties`].sort(),
    );
  });

  it.each(STAGES)('%s: each accepted finding is ignored on the resources of its type only, with its reason', (name) => {
    for (const accepted of ACCEPTED_CFN_LINT_FINDINGS) expect(accepted.reason.length).toBeGreaterThan(40);
    const ignoring = Object.entries(stage(name).json.Resources)
      .filter(([, r]) => (r.Metadata as Record<string, unknown> | undefined)?.['cfn-lint'] !== undefined)
      .map(([, r]) => [
        r.Type,
        (r.Metadata as { 'cfn-lint': { config: { ignore_checks: string[] } } })['cfn-lint'].config.ignore_checks,
      ]);
    expect(ignoring).toEqual(ACCEPTED_CFN_LINT_FINDINGS.map((accepted) => [accepted.resourceType, [accepted.rule]]));
  });
});
