/**
 * `npm run synth`: synthesizes both stages into cdk.out (`cdk synth --quiet`, offline, no
 * credentials), then prints what each template holds (tools/synth/templates.ts) and writes each stack's
 * bootstrap policies beside it (tools/policies/executionPolicy.ts). It takes no arguments;
 * anything else is refused in one line before the minute of synthesis, and `cdk synth` flags go to
 * `npx cdk synth` itself.
 */
import '../local/requireNode22.mjs';
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { writeStackPolicies } from '../tools/policies/executionPolicy.ts';
import { printTemplates } from '../tools/synth/templates.ts';

const USAGE = 'Usage: npm run synth (no arguments; give cdk synth flags to npx cdk synth)';
const OUTDIR = 'cdk.out';

try {
  parseArgs({ options: {} });
} catch (error) {
  console.error(`npm run synth: ${(error as Error).message} (${USAGE})`);
  process.exit(2);
}

// cdk prints its own errors (a failed synthesis names the construct); its exit code is ours.
const synth = spawnSync('cdk', ['synth', '--quiet', '--output', OUTDIR], { stdio: 'inherit' });
if (synth.error) {
  console.error(`npm run synth: could not run cdk (${synth.error.message}); run it through npm, after npm ci`);
  process.exit(1);
}
if (synth.status !== 0) process.exit(synth.status ?? 1);
printTemplates(OUTDIR);
// Each stack's bootstrap policies, from the templates just written (docs/deploying.md "Who may do what").
console.log('\nBootstrap policies (cdk bootstrap --cloudformation-execution-policies, --custom-permissions-boundary):');
try {
  for (const file of writeStackPolicies(OUTDIR)) console.log(`  ${file}`);
} catch (error) {
  console.error(`npm run synth: ${(error as Error).message}`);
  process.exit(1);
}
