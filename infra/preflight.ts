/**
 * What the app checks before it builds anything, when the CDK CLI runs it.
 *
 * The CLI resolves the deployer's AWS account before it runs the app, and passes it on as
 * CDK_DEFAULT_ACCOUNT (with CDK_DEFAULT_REGION, which it always sets: the profile's region, else
 * us-east-1). When the account is missing the CLI found no credentials that work, and a command that
 * acts on an account (deploy, diff, destroy, bootstrap...) can only fail, after the app has bundled
 * every function, with "Unable to resolve AWS account to use". A synth or a list needs no account
 * and must keep working offline, so the app needs the command too, which the CLI does not pass on:
 * it reads it from the CLI's own command line, the closest `cdk` process among its ancestors
 * (/proc on Linux, `ps` elsewhere). When none is found (another runner, Windows) nothing is checked.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

/** CDK CLI commands that act on an AWS account (the CLI's command list, aws-cdk 2.1148). */
export const ACCOUNT_COMMANDS: ReadonlySet<string> = new Set([
  'deploy',
  'diff',
  'destroy',
  'bootstrap',
  'import',
  'watch',
  'rollback',
  'drift',
  'gc',
  'refactor',
  'publish-assets',
  'orphan',
]);

/** The commands that need nothing from AWS. */
const OFFLINE_COMMANDS = [
  'synth',
  'synthesize',
  'list',
  'ls',
  'metadata',
  'context',
  'acknowledge',
  'ack',
  'notices',
  'doctor',
  'docs',
  'flags',
  'init',
  'migrate',
  'cli-telemetry',
];
const CDK_COMMANDS: ReadonlySet<string> = new Set([...ACCOUNT_COMMANDS, ...OFFLINE_COMMANDS]);

/** How far up the process tree the CLI may be (app <- tsx <- npm exec <- shell <- cdk, today). */
const MAX_ANCESTORS = 10;

export interface ProcessInfo {
  readonly parentPid: number;
  /** Its command line, word by word (split on spaces where the system gives only a string). */
  readonly args: readonly string[];
}

export type ProcessReader = (pid: number) => ProcessInfo | undefined;

/** The CLI's global options that take a value as the next word (`--profile deploy` names a profile, not a command). */
const VALUE_OPTIONS: ReadonlySet<string> = new Set([
  '--app',
  '-a',
  '--build',
  '--context',
  '-c',
  '--plugin',
  '-p',
  '--output',
  '-o',
  '--profile',
  '--proxy',
  '--ca-bundle-path',
  '--role-arn',
  '-r',
  '--toolkit-stack-name',
  '--asset-metadata',
  '--version-reporting',
]);

/**
 * The command of a CDK CLI command line (`cdk --profile p diff X` -> `diff`): its first word that is
 * not an option or an option's value. Undefined when that word is no command the CLI knows (then
 * nothing is refused: a wrong guess must never stop an offline synth).
 */
export function cdkCommand(cliArgs: readonly string[]): string | undefined {
  for (let i = 0; i < cliArgs.length; i++) {
    const arg = cliArgs[i]!;
    if (!arg.startsWith('-')) return CDK_COMMANDS.has(arg) ? arg : undefined;
    if (!arg.includes('=') && VALUE_OPTIONS.has(arg)) i++;
  }
  return undefined;
}

/** The arguments of the CDK CLI process among the ancestors of `pid`, nearest first; undefined when none is. */
export function cdkCliArgs(pid: number, read: ProcessReader = readProcess): readonly string[] | undefined {
  let info = read(pid);
  for (let depth = 0; info && depth < MAX_ANCESTORS; depth++) {
    // `node /…/bin/cdk diff …` (npx, or a global install) or the `cdk` executable itself.
    const cli = info.args.slice(0, 2).findIndex((arg) => /(^|[\\/])cdk(\.js|\.cmd)?$/.test(arg));
    if (cli >= 0) return info.args.slice(cli + 1);
    if (info.parentPid <= 1) return undefined;
    info = read(info.parentPid);
  }
  return undefined;
}

/**
 * The one line to fail with when the CLI runs a command that needs an AWS account and found no
 * credentials; undefined otherwise (always when not run by the CLI: tests, tools).
 */
export function missingCredentials(
  env: NodeJS.ProcessEnv = process.env,
  cliArgs: () => readonly string[] | undefined = () => cdkCliArgs(process.pid),
): string | undefined {
  const runByCli = env.CDK_DEFAULT_REGION !== undefined && env.CDK_OUTDIR !== undefined;
  if (!runByCli || env.CDK_DEFAULT_ACCOUNT) return undefined;
  const command = cdkCommand(cliArgs() ?? []);
  if (command === undefined || !ACCOUNT_COMMANDS.has(command)) return undefined;
  return (
    `cdk ${command} needs AWS credentials and the CDK CLI found none that work: give a profile ` +
    `(--profile <name> or AWS_PROFILE; "aws sso login" first for SSO) or AWS_ACCESS_KEY_ID and ` +
    `AWS_SECRET_ACCESS_KEY, and check "aws sts get-caller-identity" (docs/deploying.md, "Deploy").`
  );
}

/** A process's parent and command line: /proc on Linux, `ps` elsewhere; undefined when unreadable. */
export function readProcess(pid: number): ProcessInfo | undefined {
  try {
    if (existsSync('/proc/self/stat')) {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The name (field 2) is parenthesised and may hold spaces: the parent pid is 2 fields after it.
      const parentPid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      return { parentPid, args };
    }
    const ps = spawnSync('ps', ['-o', 'ppid=', '-o', 'args=', '-p', String(pid)], { encoding: 'utf8' });
    const match = /^\s*(\d+)\s+(.*)$/.exec(ps.stdout ?? '');
    return match ? { parentPid: Number(match[1]), args: match[2]!.trim().split(/\s+/) } : undefined;
  } catch {
    return undefined;
  }
}
