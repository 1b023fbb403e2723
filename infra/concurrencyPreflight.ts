/**
 * What `cdk deploy` checks before it builds anything, when a stage it deploys reserves Lambda
 * concurrency (`reservedConcurrency` in ./stages.ts): Lambda refuses a function's reservation that
 * would leave the account fewer than UNRESERVED_MINIMUM unreserved executions, and a new account's
 * quota can be as low as 10. CloudFormation would say so only after bundling every function and
 * creating half the stack, then roll it back; this says it first, in one line, from the account's
 * quota (Lambda GetAccountSettings, `AccountLimit.ConcurrentExecutions`).
 *
 * It reads the quota with the deployer's own credentials (the CLI's `--profile`, else the SDK's
 * default chain), in the CLI's region; AWS_ENDPOINT_URL_LAMBDA (or AWS_ENDPOINT_URL) points it
 * elsewhere, as it does the SDK. Reservations of other functions of the account are not counted
 * here: CloudFormation still refuses a deploy they leave no room for.
 */
import { awsRestClient } from './awsRest.ts';
import { stackName } from './names.ts';
import { STAGES, STAGE_SETTINGS, reservedTotal, type Stage } from './stages.ts';

/** Lambda keeps at least this many executions unreserved in every account and Region. */
export const UNRESERVED_MINIMUM = 10;

/** What the account allows: its concurrency quota. */
export type AccountQuota = () => Promise<number>;

/** The stages a `cdk deploy` command line deploys: the stacks it names (wildcards too), or all of them with `--all`. */
export function deployedStages(cliArgs: readonly string[]): Stage[] {
  const words = cliArgs.slice(cliArgs.indexOf('deploy') + 1);
  if (words.includes('--all')) return [...STAGES];
  const patterns = words.filter((word) => !word.startsWith('-')).map(globPattern);
  return STAGES.filter((stage) => patterns.some((pattern) => pattern.test(stackName(stage))));
}

const globPattern = (glob: string): RegExp =>
  new RegExp(
    `^${glob
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );

/** The `--profile` of a CDK command line, if any. */
export function profileOf(cliArgs: readonly string[]): string | undefined {
  const at = cliArgs.findIndex((arg) => arg === '--profile' || arg.startsWith('--profile='));
  if (at < 0) return undefined;
  const arg = cliArgs[at]!;
  return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : cliArgs[at + 1];
}

/** The account's concurrency quota, read with Lambda's GetAccountSettings. */
export function lambdaAccountQuota(env: NodeJS.ProcessEnv, region: string, profile: string | undefined): AccountQuota {
  const call = awsRestClient({
    service: 'lambda',
    region,
    endpoint: env.AWS_ENDPOINT_URL_LAMBDA || env.AWS_ENDPOINT_URL || undefined,
    profile,
  });
  return async () => {
    const settings = await call('GET', '/2016-08-19/account-settings/');
    const quota = (settings.AccountLimit as { ConcurrentExecutions?: unknown } | undefined)?.ConcurrentExecutions;
    if (typeof quota !== 'number')
      throw new Error(`GetAccountSettings answered no AccountLimit.ConcurrentExecutions: ${JSON.stringify(settings)}`);
    return quota;
  };
}

/**
 * The one line to fail `cdk deploy` with when the stages it deploys reserve more concurrency than
 * the account's quota can hold beside the unreserved minimum, or when the quota cannot be read;
 * undefined when they fit, or reserve none (nothing is asked of AWS then).
 */
export async function concurrencyShortfall(
  cliArgs: readonly string[],
  region: string,
  quota: AccountQuota,
): Promise<string | undefined> {
  const stages = deployedStages(cliArgs).filter((stage) => reservedTotal(STAGE_SETTINGS[stage]) > 0);
  if (stages.length === 0) return undefined;
  const reserved = stages.reduce((sum, stage) => sum + reservedTotal(STAGE_SETTINGS[stage]), 0);
  const needed = reserved + UNRESERVED_MINIMUM;
  const stacks = stages.map(stackName).join(' and ');
  let limit: number;
  try {
    limit = await quota();
  } catch (error) {
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return (
      `cdk deploy ${stacks} reserves ${reserved} concurrent Lambda executions, and the account's quota in ${region} could not be read to check ` +
      `it holds them (${reason}): the deployer needs lambda:GetAccountSettings (infra/policies/deployer-production.json).`
    );
  }
  if (limit >= needed) return undefined;
  return (
    `cdk deploy ${stacks} reserves ${reserved} concurrent Lambda executions (reservedConcurrency in infra/stages.ts), and Lambda keeps ` +
    `${UNRESERVED_MINIMUM} unreserved: the account's concurrency quota in ${region} is ${limit}, not the ${needed} that needs. ` +
    `Ask for more (Service Quotas, AWS Lambda, "Concurrent executions") before deploying (docs/deploying.md, "Reserved concurrency").`
  );
}
