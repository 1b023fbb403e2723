/**
 * What `npm run bench` is asked to do: its flags, how many samples each phase takes, and how each
 * timed process is started. A flag it does not take is a `BenchUsageError` (one line, exit 2).
 */
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { BUNDLE_FORMATS, DEPLOYED_FORMAT, type BundleFormat } from '../../infra/bundle/bundling.ts';
import { STAGE_SETTINGS } from '../../infra/stages.ts';
import { lambdaNodeArgs, type ProcessLaunch } from './coldRequest.ts';

export const USAGE = 'Usage: npm run bench [-- --quick] [--cold-only] [--format esm|cjs|both] [--lambda-node-args] [--one-core]';

/** A mistake in the bench's arguments: `scripts/bench.ts` prints its message alone and exits 2. */
export class BenchUsageError extends Error {}

/** The functions' memory as production deploys them: what Lambda's runtime sizes node's heap from. */
export const FUNCTION_MEMORY_MIB = STAGE_SETTINGS.production.functionMemoryMiB;

export interface BenchSettings {
  /** The flags as given, for the report's first line. */
  given: string;
  quick: boolean;
  coldOnly: boolean;
  /** The bundle formats built and timed, the deployed one first. */
  formats: BundleFormat[];
  launch: ProcessLaunch;
  /** Fresh processes per bundle for the import alone, and for import + first invocation. */
  coldImports: number;
  coldRequests: number;
  warmRequests: number;
  warmUp: number;
  /** Pets per shard count in the status index's read-cost walks. */
  readCostPets: number;
}

const BOOLEAN = { type: 'boolean' } as const;
const OPTIONS = { quick: BOOLEAN, 'cold-only': BOOLEAN, format: { type: 'string' }, 'lambda-node-args': BOOLEAN, 'one-core': BOOLEAN } as const;

/** The settings `argv` asks for; a `BenchUsageError` for anything else (a positional too: the bench takes none). */
export function benchSettings(argv: string[]): BenchSettings {
  const values = parsed(argv);
  const quick = Boolean(values.quick);
  return {
    given: argv.join(' '),
    quick,
    coldOnly: Boolean(values['cold-only']),
    formats: formatsOf(values.format),
    launch: processLaunch(Boolean(values['lambda-node-args']), Boolean(values['one-core'])),
    // --quick (the walkthrough test's run) proves the machinery with few samples: its figures are rough.
    coldImports: quick ? 3 : 21,
    // 41: a fresh process here runs at one of two speeds, so the median of 21 moved the ratios by up
    // to 0.04x from run to run (11 by more).
    coldRequests: quick ? 3 : 41,
    warmRequests: quick ? 300 : 2_000,
    warmUp: quick ? 30 : 200,
    readCostPets: quick ? 300 : 1_000,
  };
}

function parsed(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS }).values;
  } catch (error) {
    throw new BenchUsageError(`${(error as Error).message} (${USAGE})`);
  }
}

function formatsOf(format: string | undefined): BundleFormat[] {
  if (format === undefined) return [DEPLOYED_FORMAT];
  if (format === 'both') return [DEPLOYED_FORMAT, ...BUNDLE_FORMATS.filter((each) => each !== DEPLOYED_FORMAT)];
  if ((BUNDLE_FORMATS as readonly string[]).includes(format)) return [format as BundleFormat];
  throw new BenchUsageError(`--format takes esm, cjs or both, not '${format}' (${USAGE})`);
}

/**
 * How every process the bench times is started (the floors' alike): plain by default;
 * `--lambda-node-args` with the arguments Lambda's runtime gives `node` for the functions' memory,
 * `--one-core` confined to one CPU, the last, as a function whose memory buys less than one vCPU
 * runs; the bench itself (the stand-in DynamoDB) then keeps to the others, if the machine has more
 * than one. A `BenchUsageError` if `taskset` is missing.
 */
function processLaunch(lambdaArgs: boolean, oneCore: boolean): ProcessLaunch {
  const nodeArgs = lambdaArgs ? lambdaNodeArgs(FUNCTION_MEMORY_MIB) : [];
  if (!oneCore) return { nodeArgs };
  const cpus = availableParallelism();
  const cpu = cpus - 1;
  const pinned = spawnSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cpus > 1 ? `0-${cpu - 1}` : '0', String(process.pid)], { encoding: 'utf8' });
  if (pinned.status !== 0) throw new BenchUsageError(`--one-core needs taskset (util-linux): ${pinned.error?.message ?? pinned.stderr.trim()}`);
  return { nodeArgs, cpu };
}
