/**
 * The cold request of every bundle (import + first invocation, a fresh process each, against the
 * stand-in DynamoDB of tools/bench/coldRequest.ts), interleaved with both floors', the order rotated
 * run by run; each function also run with V8's compile cache (not deployed), or, with `--paired
 * <dir>`, beside another build of it, and the two compared sample by sample: the bench's paired run.
 */
import { dirname, join } from 'node:path';
import { FUNCTION_NODE_OPTIONS } from '../../infra/bundle/bundling.ts';
import { FLOOR_LABELS, type BuiltBundle, type BundleSet, type FloorName } from './bundles.ts';
import { coldRequest, startStandInDynamo, type ColdSample, type ProcessLaunch } from './coldRequest.ts';
import { difference, interval, ms, table, times } from './print.ts';
import { benchKeyItem, coldInvocations } from './requests.ts';
import { estimate, median, pairedDifference, type Estimate } from './stats.ts';

/** How a bundle is run: as built here, with V8's compile cache (not deployed), or another build of it (`--paired`). */
type Run = 'as built' | 'compile cache' | 'paired';

/** One timed variant: a bundle, run one way, from its file. */
interface Variant {
  bundle: BuiltBundle;
  run: Run;
  file: string;
}

/** A bundle's cold request: medians of its fresh processes' import, first invocation and both together. */
interface ColdFigures {
  importMs: number;
  firstMs: number;
  coldMs: number;
  /** The cold request's median with its 90% bootstrap interval. */
  cold: Estimate;
  /** The cold request's CPU time (user + system): steadier than wall time on a shared machine; not a target. */
  coldCpuMs: number;
}

export interface ColdRow extends ColdFigures {
  name: BuiltBundle['name'];
  run: Run;
  /** The cold request and the first invocation alone against the default floor's, in the same run. */
  coldRatio: number;
  firstRatio: number;
  coldCpuRatio: number;
}

/** This tree's build of a function against another (`--paired <dir>`): paired differences (this - other), per phase. */
export interface PairedComparison {
  name: BuiltBundle['name'];
  other: Estimate;
  ours: Estimate;
  importDiff: Estimate;
  firstDiff: Estimate;
  coldDiff: Estimate;
  /** The cold request's CPU time (user + system), steadier than wall time on a shared machine. */
  coldCpuDiff: Estimate;
}

export interface ColdResults {
  rows: ColdRow[];
  paired: PairedComparison[];
}

const coldOf = (sample: ColdSample) => sample.importMs + sample.firstMs;
const cpuOf = (sample: ColdSample) => sample.importCpuMs + sample.firstCpuMs;

const figuresOf = (samples: ColdSample[]): ColdFigures => ({
  importMs: median(samples.map((s) => s.importMs)),
  firstMs: median(samples.map((s) => s.firstMs)),
  coldMs: median(samples.map(coldOf)),
  cold: estimate(samples.map(coldOf)),
  coldCpuMs: median(samples.map(cpuOf)),
});

/** The code cache's directory beside a bundle's file. */
const cacheEnvironment = (file: string) => ({
  NODE_OPTIONS: FUNCTION_NODE_OPTIONS,
  NODE_COMPILE_CACHE: join(dirname(file), 'compile-cache'),
});

/** Every variant the run times: both floors, each function as built, and each either with the compile cache or as `paired` has it. */
function variantsOf(
  { floor, lambdaFloor, functions }: BundleSet,
  files: Map<BuiltBundle, string>,
  paired?: Map<string, string>,
): Variant[] {
  const variants: Variant[] = [floor, lambdaFloor, ...functions].map((bundle) => ({
    bundle,
    run: 'as built',
    file: files.get(bundle)!,
  }));
  for (const bundle of functions) {
    variants.push(
      paired
        ? { bundle, run: 'paired', file: paired.get(bundle.name)! }
        : { bundle, run: 'compile cache', file: files.get(bundle)! },
    );
  }
  return variants;
}

/**
 * Every variant's samples, `runs` rounds: in each, per function, that function's variants and both
 * floors, one fresh process each. Without `paired`, the compile cache's variant has its cache
 * written first by one untimed run.
 */
export async function measureColdRequests(
  set: BundleSet,
  files: Map<BuiltBundle, string>,
  runs: number,
  launch: ProcessLaunch,
  paired?: Map<string, string>,
): Promise<ColdResults> {
  const standIn = await startStandInDynamo(benchKeyItem(new Date().toISOString()));
  try {
    const invocations = coldInvocations();
    const variants = variantsOf(set, files, paired);
    const environmentOf = (variant: Variant) =>
      variant.run === 'compile cache' ? cacheEnvironment(variant.file) : { NODE_OPTIONS: FUNCTION_NODE_OPTIONS };
    for (const variant of variants.filter((v) => v.run === 'compile cache'))
      await coldRequest(variant.file, invocations[variant.bundle.name], standIn, environmentOf(variant), launch);
    const samples = new Map<Variant, ColdSample[]>(variants.map((v) => [v, []]));
    for (let run = 0; run < runs; run++) {
      for (const bundle of set.functions) {
        const order = variants.filter(
          (v) => v.bundle === bundle || v.bundle === set.floor || v.bundle === set.lambdaFloor,
        );
        for (let i = 0; i < order.length; i++) {
          const next = order[(run + i) % order.length]!;
          samples
            .get(next)!
            .push(await coldRequest(next.file, invocations[next.bundle.name], standIn, environmentOf(next), launch));
        }
      }
    }
    return { rows: coldRows(variants, samples, set.floor), paired: paired ? pairedComparisons(variants, samples) : [] };
  } finally {
    await standIn.close();
  }
}

/** Each variant's figures, with its ratios to the default floor's. */
function coldRows(variants: Variant[], samples: Map<Variant, ColdSample[]>, floor: BuiltBundle): ColdRow[] {
  const base = figuresOf(samples.get(variants.find((v) => v.bundle === floor)!)!);
  return variants.map((variant) => {
    const figures = figuresOf(samples.get(variant)!);
    return {
      name: variant.bundle.name,
      run: variant.run,
      ...figures,
      coldRatio: figures.coldMs / base.coldMs,
      firstRatio: figures.firstMs / base.firstMs,
      coldCpuRatio: figures.coldCpuMs / base.coldCpuMs,
    };
  });
}

/** Each function as built here against its other build, sample by sample (both ran side by side in every round). */
function pairedComparisons(variants: Variant[], samples: Map<Variant, ColdSample[]>): PairedComparison[] {
  return variants
    .filter((variant) => variant.run === 'paired')
    .map((other) => {
      const theirs = samples.get(other)!;
      const ours = samples.get(variants.find((v) => v.bundle === other.bundle && v.run === 'as built')!)!;
      const phase = (of: (sample: ColdSample) => number) => pairedDifference(theirs.map(of), ours.map(of));
      return {
        name: other.bundle.name,
        other: estimate(theirs.map(coldOf)),
        ours: estimate(ours.map(coldOf)),
        importDiff: phase((s) => s.importMs),
        firstDiff: phase((s) => s.firstMs),
        coldDiff: phase(coldOf),
        coldCpuDiff: phase(cpuOf),
      };
    });
}

/** The cold request table: every variant's medians and ratios, the cold request's interval beside it. */
export function printColdRequests(rows: ColdRow[], runs: number): void {
  const functions = rows.filter((row) => row.name !== 'floor' && row.name !== 'lambdaFloor' && row.run === 'as built');
  const label = (row: ColdRow) =>
    row.name in FLOOR_LABELS
      ? FLOOR_LABELS[row.name as FloorName]
      : `${row.name}${{ 'as built': '', 'compile cache': ' + compile cache (not deployed)', paired: ' (--paired)' }[row.run]}`;
  table(
    `Cold request: a fresh process imports the bundle and serves its first invocation against an instant stand-in DynamoDB ` +
      `(median of ${runs} each, 90% interval of the cold request's median; the floors' of all ${runs * functions.length}, interleaved)`,
    [
      'bundle',
      'import',
      'first invocation',
      'cold request',
      'interval',
      'x floor cold',
      'first x floor first',
      'cold CPU',
      'x floor CPU',
    ],
    rows.map((row) => [
      label(row),
      ms(row.importMs),
      ms(row.firstMs),
      ms(row.coldMs),
      interval(row.cold),
      times(row.coldRatio),
      times(row.firstRatio),
      ms(row.coldCpuMs),
      times(row.coldCpuRatio),
    ]),
  );
}

/** This tree's functions against `--paired`'s: both medians, and the paired differences with their intervals. */
export function printPairedComparison(paired: PairedComparison[], dir: string): void {
  if (paired.length === 0) return;
  table(
    `Against ${dir}, paired (each round ran both side by side; this tree - ${dir}, median of the ${paired[0]!.coldDiff.n} per-round differences, 90% interval)`,
    ['function', 'paired cold request', 'this cold request', 'import', 'first invocation', 'cold request', 'cold CPU'],
    paired.map((row) => [
      row.name,
      `${ms(row.other.median)} (${interval(row.other)})`,
      `${ms(row.ours.median)} (${interval(row.ours)})`,
      difference(row.importDiff),
      difference(row.firstDiff),
      difference(row.coldDiff),
      difference(row.coldCpuDiff),
    ]),
  );
}
