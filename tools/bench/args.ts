/**
 * What `npm run bench` is asked to do: its flags, how many samples each phase takes, and how each
 * timed process is started. A flag it does not take is a `BenchUsageError` (one line, exit 2).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { routes } from '../../lib/domain/routes.ts';
import { STAGE_SETTINGS } from '../../infra/stages.ts';
import { lambdaNodeArgs, type ProcessLaunch } from './coldRequest.ts';

const USAGE = 'Usage: npm run bench [-- --quick] [--cold-only] [--lambda-node-args] [--one-core] [--paired <dir>]';

/** A mistake in the bench's arguments: `scripts/bench.ts` prints its message alone and exits 2. */
export class BenchUsageError extends Error {}

/** The functions' memory as production deploys them: what Lambda's runtime sizes node's heap from. */
export const FUNCTION_MEMORY_MIB = STAGE_SETTINGS.production.functionMemoryMiB;

export interface BenchSettings {
  /** The flags as given, for the report's first line. */
  given: string;
  quick: boolean;
  coldOnly: boolean;
  launch: ProcessLaunch;
  /** `--paired <dir>`: the folder, and each function's other build in it, timed beside this tree's. */
  paired?: { dir: string; files: Map<string, string> } | undefined;
  /** Fresh processes per bundle for the import alone, and for import + first invocation. */
  coldImports: number;
  coldRequests: number;
  warmRequests: number;
  warmUp: number;
  /** Pets per shard count in the status index's read-cost walks. */
  readCostPets: number;
}

const BOOLEAN = { type: 'boolean' } as const;
const OPTIONS = {
  quick: BOOLEAN,
  'cold-only': BOOLEAN,
  'lambda-node-args': BOOLEAN,
  'one-core': BOOLEAN,
  paired: { type: 'string' },
} as const;

/** The settings `argv` asks for; a `BenchUsageError` for anything else (a positional too: the bench takes none). */
export function benchSettings(argv: string[]): BenchSettings {
  const values = parsed(argv);
  const quick = Boolean(values.quick);
  return {
    given: argv.join(' '),
    quick,
    coldOnly: Boolean(values['cold-only']),
    launch: processLaunch(Boolean(values['lambda-node-args']), Boolean(values['one-core'])),
    paired: values.paired === undefined ? undefined : pairedBuilds(values.paired),
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

/**
 * Another build of every function, as `npm run build` writes them (`<dir>/<operation>/index.js`, or
 * an ES module's `index.mjs`): for a change, build the commit before it into a folder of its own and
 * time this tree's bundles against it. A `BenchUsageError` when one is missing.
 */
function pairedBuilds(given: string): { dir: string; files: Map<string, string> } {
  const dir = resolve(given);
  const files = new Map<string, string>();
  for (const { operation } of routes) {
    const file = ['index.js', 'index.mjs'].map((name) => join(dir, operation, name)).find((each) => existsSync(each));
    if (!file)
      throw new BenchUsageError(
        `--paired ${given}: no ${operation}/index.js (or index.mjs) there; write one with npm run build at the commit to compare with`,
      );
    files.set(operation, file);
  }
  return { dir: given, files };
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
  const pinned = spawnSync(
    'taskset',
    ['--all-tasks', '--cpu-list', '--pid', cpus > 1 ? `0-${cpu - 1}` : '0', String(process.pid)],
    { encoding: 'utf8' },
  );
  if (pinned.status !== 0)
    throw new BenchUsageError(
      `--one-core needs taskset (util-linux): ${pinned.error?.message ?? pinned.stderr.trim()}`,
    );
  return { nodeArgs, cpu };
}
