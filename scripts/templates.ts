/**
 * Prints what `cdk synth` wrote to cdk.out for every stack: its template file, resources by type
 * and outputs. `npm run synth` runs it after synthesizing both stages.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const outdir = process.argv[2] ?? 'cdk.out';
interface Manifest {
  artifacts: Record<string, { type: string; properties?: { templateFile?: string }; environment?: string }>;
}
interface Template {
  Resources: Record<string, { Type: string }>;
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
}
