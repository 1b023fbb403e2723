/**
 * `npm run -s policy -- <policy file> --account <id> --region <region> [--stage <stage>] [--usage-plan-id <id>]`:
 * prints the policy with its placeholders filled (tools/policies/fill.ts), for `aws iam create-policy`.
 * A mistake is one line on stderr and exit code 2.
 */
import '../local/requireNode22.mjs';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { typedPath } from '@petstore/local-kit/typedPath';
import { PLACEHOLDERS, PolicyFillError, fillPolicy } from '../tools/policies/fill.ts';

const USAGE =
  'Usage: npm run -s policy -- <policy file> --account <id> --region <region> [--stage <stage>] [--usage-plan-id <id>]';

try {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: Object.fromEntries(Object.keys(PLACEHOLDERS).map((name) => [name, { type: 'string' }])),
  });
  if (positionals.length !== 1) throw new PolicyFillError('give one policy file');
  let text: string;
  try {
    text = readFileSync(typedPath(positionals[0]!, 'policy'), 'utf8');
  } catch (error) {
    throw new PolicyFillError(`cannot read ${positionals[0]} (${(error as Error).message})`);
  }
  process.stdout.write(fillPolicy(text, values as Record<string, string | undefined>));
} catch (error) {
  if (!(error instanceof PolicyFillError) && !(error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))
    throw error;
  console.error(`npm run policy: ${(error as Error).message} (${USAGE})`);
  process.exit(2);
}
