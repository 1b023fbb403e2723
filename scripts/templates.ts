/**
 * Prints what `cdk synth` wrote to cdk.out for every stack: its template file, resources by type,
 * outputs, alarms (with thresholds), dashboards and canary deployment groups. `npm run synth` runs
 * it after synthesizing both stages.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const outdir = process.argv[2] ?? 'cdk.out';
interface Manifest {
  artifacts: Record<string, { type: string; properties?: { templateFile?: string }; environment?: string }>;
}
interface Template {
  Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
  Outputs?: Record<string, { Description?: string }>;
}

const manifest = JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8')) as Manifest;
for (const [name, artifact] of Object.entries(manifest.artifacts)) {
  if (artifact.type !== 'aws:cloudformation:stack' || !artifact.properties?.templateFile) continue;
  const file = join(outdir, artifact.properties.templateFile);
  const template = JSON.parse(readFileSync(file, 'utf8')) as Template;
  const counts = new Map<string, number>();
  for (const resource of Object.values(template.Resources)) counts.set(resource.Type, (counts.get(resource.Type) ?? 0) + 1);
  console.log(`\n${name} (${artifact.environment ?? 'environment-agnostic'}): ${file}`);
  for (const [type, count] of [...counts].sort()) console.log(`  ${String(count).padStart(3)}  ${type}`);
  for (const [output, { Description }] of Object.entries(template.Outputs ?? {})) console.log(`  output ${output}: ${Description ?? ''}`);
  for (const line of monitoringSummary(template)) console.log(`  ${line}`);
}

/** Alarms as `name >= threshold (n of m minutes)`, dashboards and deployment groups by name. */
function monitoringSummary(template: Template): string[] {
  const lines: string[] = [];
  for (const { Type, Properties: p = {} } of Object.values(template.Resources)) {
    if (Type === 'AWS::CloudWatch::Alarm') {
      lines.push(`alarm ${String(p.AlarmName)} >= ${String(p.Threshold)} (${String(p.DatapointsToAlarm)} of ${String(p.EvaluationPeriods)} minutes)`);
    } else if (Type === 'AWS::CloudWatch::Dashboard') {
      lines.push(`dashboard ${String(p.DashboardName)}`);
    } else if (Type === 'AWS::CodeDeploy::DeploymentGroup') {
      const alarms = (p.AlarmConfiguration as { Alarms?: unknown[] } | undefined)?.Alarms?.length ?? 0;
      lines.push(`canary ${String(p.DeploymentConfigName)}, rolled back by ${alarms} alarms`);
    }
  }
  return lines.sort();
}
