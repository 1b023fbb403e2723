/**
 * Prints what `cdk synth` wrote to cdk.out for every stack: its template file, resources by type,
 * parameters (what `cdk deploy` must be given), outputs, web ACLs (with their rules), alarms (with
 * thresholds), dashboards and canary deployment groups. `npm run synth` (scripts/synth.ts) prints it
 * after synthesizing both stages.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Manifest {
  artifacts: Record<string, { type: string; properties?: { templateFile?: string }; environment?: string }>;
}
interface Template {
  Parameters?: Record<string, { Type: string; Default?: unknown; Description?: string }>;
  Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
  Outputs?: Record<string, { Description?: string }>;
}

/** The CDK's own parameters (the bootstrap version), which nobody gives. */
const CDK_PARAMETERS = new Set(['BootstrapVersion']);

/** Prints every stack of the cloud assembly in `outdir`. */
export function printTemplates(outdir: string): void {
  const manifest = JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8')) as Manifest;
  for (const [name, artifact] of Object.entries(manifest.artifacts)) {
    if (artifact.type !== 'aws:cloudformation:stack' || !artifact.properties?.templateFile) continue;
    const file = join(outdir, artifact.properties.templateFile);
    const template = JSON.parse(readFileSync(file, 'utf8')) as Template;
    const counts = new Map<string, number>();
    for (const resource of Object.values(template.Resources))
      counts.set(resource.Type, (counts.get(resource.Type) ?? 0) + 1);
    console.log(`\n${name} (${artifact.environment ?? 'environment-agnostic'}): ${file}`);
    for (const [type, count] of [...counts].sort()) console.log(`  ${String(count).padStart(3)}  ${type}`);
    for (const line of parameterSummary(template)) console.log(`  ${line}`);
    for (const [output, { Description }] of Object.entries(template.Outputs ?? {}))
      console.log(`  output ${output}: ${Description ?? ''}`);
    for (const line of webAclSummary(template)) console.log(`  ${line}`);
    for (const line of monitoringSummary(template)) console.log(`  ${line}`);
  }
}

/** Parameters as `parameter AlarmEmail (required: ...)` or `(optional, default "")`. */
function parameterSummary(template: Template): string[] {
  return Object.entries(template.Parameters ?? {})
    .filter(([name]) => !CDK_PARAMETERS.has(name))
    .map(([name, { Default, Description }]) =>
      Default === undefined
        ? `parameter ${name} (required, no default): ${Description ?? ''}`
        : `parameter ${name} (optional, default ${JSON.stringify(Default)}): ${Description ?? ''}`,
    );
}

interface WebAclRule {
  Name: string;
  Priority: number;
  Statement: {
    RateBasedStatement?: { Limit: number; EvaluationWindowSec?: number };
    ManagedRuleGroupStatement?: { RuleActionOverrides?: { Name: string }[] };
  };
}

/** Web ACLs as `web ACL name (scope): rule, rule...`, and what each is associated with. */
function webAclSummary(template: Template): string[] {
  const lines: string[] = [];
  for (const { Type, Properties: p = {} } of Object.values(template.Resources)) {
    if (Type !== 'AWS::WAFv2::WebACL') continue;
    const rules = [...((p.Rules as WebAclRule[] | undefined) ?? [])]
      .sort((a, b) => a.Priority - b.Priority)
      .map(describeRule);
    lines.push(`web ACL ${String(p.Name)} (${String(p.Scope)}): ${rules.join('; ')}`);
  }
  const associations = Object.values(template.Resources).filter(
    ({ Type }) => Type === 'AWS::WAFv2::WebACLAssociation',
  ).length;
  if (associations > 0) lines.push(`web ACL associations: ${associations} (the API stage)`);
  return lines;
}

function describeRule({ Name, Statement }: WebAclRule): string {
  const rate = Statement.RateBasedStatement;
  if (rate) return `${Name} (${rate.Limit} requests per address per ${(rate.EvaluationWindowSec ?? 300) / 60} minutes)`;
  const counted = Statement.ManagedRuleGroupStatement?.RuleActionOverrides?.map((override) => override.Name) ?? [];
  return counted.length > 0 ? `${Name} (counting only ${counted.join(', ')})` : Name;
}

/** Alarms as `name >= threshold (n of m minutes)`, dashboards and deployment groups by name. */
function monitoringSummary(template: Template): string[] {
  const lines: string[] = [];
  for (const { Type, Properties: p = {} } of Object.values(template.Resources)) {
    if (Type === 'AWS::CloudWatch::Alarm') {
      lines.push(
        `alarm ${String(p.AlarmName)} >= ${String(p.Threshold)} (${String(p.DatapointsToAlarm)} of ${String(p.EvaluationPeriods)} minutes)`,
      );
    } else if (Type === 'AWS::CloudWatch::Dashboard') {
      lines.push(`dashboard ${String(p.DashboardName)}`);
    } else if (Type === 'AWS::CodeDeploy::DeploymentGroup') {
      const alarms = (p.AlarmConfiguration as { Alarms?: unknown[] } | undefined)?.Alarms?.length ?? 0;
      lines.push(`canary ${String(p.DeploymentConfigName)}, rolled back by ${alarms} alarms`);
    }
  }
  return lines.sort();
}
