/**
 * Fills a policy template's placeholders (`<account>`, `<region>`, `<stage>`, `<usage-plan-id>`) for
 * `aws iam create-policy`: `npm run -s policy` (scripts/policy.ts; docs/deploying.md "Who may do what").
 * A placeholder the file holds but no value is given for, or a value of the wrong shape, is refused,
 * so no policy is ever created for the account "" or the Region "<region>".
 */
import { STAGES } from '../../lib/domain/stages.ts';

export const PLACEHOLDERS = {
  account: { shape: /^\d{12}$/, says: 'a 12-digit AWS account id' },
  region: { shape: /^[a-z]{2}(-[a-z]+)+-\d+$/, says: 'an AWS Region such as us-east-1' },
  stage: { shape: new RegExp(`^(${STAGES.join('|')})$`), says: `one of ${STAGES.join(', ')}` },
  'usage-plan-id': { shape: /^[a-z0-9]{6,10}$/, says: "the stage's UsagePlanId stack output" },
} as const;
export type Placeholder = keyof typeof PLACEHOLDERS;

export class PolicyFillError extends Error {}

/** `text` with every placeholder replaced; throws a PolicyFillError naming the first one missing or malformed. */
export function fillPolicy(text: string, values: Partial<Record<Placeholder, string | undefined>>): string {
  let filled = text;
  for (const [name, { shape, says }] of Object.entries(PLACEHOLDERS) as [
    Placeholder,
    (typeof PLACEHOLDERS)[Placeholder],
  ][]) {
    if (!filled.includes(`<${name}>`)) continue;
    const value = values[name];
    if (!value) throw new PolicyFillError(`the policy has <${name}>: give --${name} (${says})`);
    if (!shape.test(value)) throw new PolicyFillError(`--${name} "${value}" is not ${says}`);
    filled = filled.replaceAll(`<${name}>`, value);
  }
  const left = /<[a-z-]+>/.exec(filled);
  if (left) throw new PolicyFillError(`the policy has ${left[0]}, which this command does not fill`);
  return filled;
}
