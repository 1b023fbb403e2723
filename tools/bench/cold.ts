/**
 * The cold request of every bundle (import + first invocation, a fresh process each, against the
 * stand-in DynamoDB of tools/bench/coldRequest.ts), interleaved with both floors' of each format
 * measured, the order rotated run by run. With two formats, each bundle's CommonJS build is also
 * compared with its ES module build sample by sample (they ran side by side in each round).
 */
import { dirname, join } from 'node:path';
import { FUNCTION_NODE_OPTIONS, type BundleFormat } from '../../infra/bundle/bundling.ts';
import { FLOOR_LABELS, type BuiltBundle, type BundleSet, type FloorName } from './bundles.ts';
import { coldRequest, startStandInDynamo, type ColdSample, type ProcessLaunch } from './coldRequest.ts';
import { difference, interval, ms, table, times } from './print.ts';
import { benchKeyItem, coldInvocations } from './requests.ts';
import { estimate, median, pairedDifference, type Estimate } from './stats.ts';

/** One timed variant: a bundle, run with or without V8's code cache. */
interface Variant {
  bundle: BuiltBundle;
  /** Run with V8's code cache (NODE_COMPILE_CACHE), produced beforehand by one untimed run of the same file. */
  compileCache: boolean;
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
  format: BundleFormat;
  compileCache: boolean;
  /** The cold request and the first invocation alone against the default floor's of the same format, in the same run. */
  coldRatio: number;
  firstRatio: number;
  coldCpuRatio: number;
}

/** CommonJS against ES module for one bundle: paired differences (cjs - esm), per phase. */
export interface FormatComparison {
  name: BuiltBundle['name'];
  esm: Estimate;
  cjs: Estimate;
  importDiff: Estimate;
  firstDiff: Estimate;
  coldDiff: Estimate;
  /** The cold request's CPU time (user + system), steadier than wall time on a shared machine. */
  coldCpuDiff: Estimate;
}

export interface ColdResults {
  rows: ColdRow[];
  formats: FormatComparison[];
}

const coldOf = (sample: ColdSample) => sample.importMs + sample.firstMs;

const figuresOf = (samples: ColdSample[]): ColdFigures => ({
  importMs: median(samples.map((s) => s.importMs)),
  firstMs: median(samples.map((s) => s.firstMs)),
  coldMs: median(samples.map(coldOf)),
  cold: estimate(samples.map(coldOf)),
  coldCpuMs: median(samples.map((s) => s.importCpuMs + s.firstCpuMs)),
});

/** The code cache's directory beside a bundle's file. */
const cacheEnvironment = (file: string) => ({ NODE_OPTIONS: FUNCTION_NODE_OPTIONS, NODE_COMPILE_CACHE: join(dirname(file), 'compile-cache') });

/**
 * Every variant's samples, `runs` rounds: in each, per function, that function's variants of each
 * format and both floors of each format, one fresh process each. With one format the functions
 * also run with V8's compile cache (not deployed), its cache written first by one untimed run.
 */
export async function measureColdRequests(sets: BundleSet[], files: Map<BuiltBundle, string>, runs: number, launch: ProcessLaunch): Promise<ColdResults> {
  const standIn = await startStandInDynamo(benchKeyItem('2026-01-01T00:00:00.000Z'));
  try {
    const invocations = coldInvocations();
    const withCache = sets.length === 1;
    const variants: Variant[] = sets.flatMap((set) => [set.floor, set.lambdaFloor, ...set.functions].map((bundle) => ({ bundle, compileCache: false })));
    if (withCache) variants.push(...sets[0]!.functions.map((bundle) => ({ bundle, compileCache: true })));
    const variantOf = (bundle: BuiltBundle, compileCache = false) => variants.find((v) => v.bundle === bundle && v.compileCache === compileCache)!;
    if (withCache) for (const bundle of sets[0]!.functions) await coldRequest(files.get(bundle)!, invocations[bundle.name], standIn, cacheEnvironment(files.get(bundle)!), launch);
    const samples = new Map<Variant, ColdSample[]>(variants.map((v) => [v, []]));
    const environment = { NODE_OPTIONS: FUNCTION_NODE_OPTIONS };
    for (let run = 0; run < runs; run++) {
      for (let k = 0; k < sets[0]!.functions.length; k++) {
        const order = sets.flatMap((set) => [
          variantOf(set.functions[k]!),
          ...(withCache ? [variantOf(set.functions[k]!, true)] : []),
          variantOf(set.floor),
          variantOf(set.lambdaFloor),
        ]);
        for (let i = 0; i < order.length; i++) {
          const { bundle, compileCache } = order[(run + i) % order.length]!;
          const file = files.get(bundle)!;
          samples.get(order[(run + i) % order.length]!)!.push(await coldRequest(file, invocations[bundle.name], standIn, compileCache ? cacheEnvironment(file) : environment, launch));
        }
      }
    }
    return { rows: coldRows(sets, variants, samples), formats: formatComparisons(sets, samples, variantOf) };
  } finally {
    await standIn.close();
  }
}

/** Each variant's figures, with its ratios to the default floor's of its format. */
function coldRows(sets: BundleSet[], variants: Variant[], samples: Map<Variant, ColdSample[]>): ColdRow[] {
  return variants.map(({ bundle, compileCache }, index) => {
    const figures = figuresOf(samples.get(variants[index]!)!);
    const floor = sets.find((set) => set.format === bundle.format)!.floor;
    const base = figuresOf(samples.get(variants.find((v) => v.bundle === floor)!)!);
    return {
      name: bundle.name,
      format: bundle.format,
      compileCache,
      ...figures,
      coldRatio: figures.coldMs / base.coldMs,
      firstRatio: figures.firstMs / base.firstMs,
      coldCpuRatio: figures.coldCpuMs / base.coldCpuMs,
    };
  });
}

/** With an ES module set and a CommonJS one: each bundle's paired differences, sample by sample. */
function formatComparisons(sets: BundleSet[], samples: Map<Variant, ColdSample[]>, variantOf: (bundle: BuiltBundle) => Variant): FormatComparison[] {
  const esm = sets.find((set) => set.format === 'esm');
  const cjs = sets.find((set) => set.format === 'cjs');
  if (!esm || !cjs) return [];
  const pairs: [BuiltBundle, BuiltBundle][] = [[esm.floor, cjs.floor], [esm.lambdaFloor, cjs.lambdaFloor], ...esm.functions.map((bundle, k): [BuiltBundle, BuiltBundle] => [bundle, cjs.functions[k]!])];
  return pairs.map(([a, b]) => {
    const [x, y] = [samples.get(variantOf(a))!, samples.get(variantOf(b))!];
    const phase = (of: (sample: ColdSample) => number) => pairedDifference(x.map(of), y.map(of));
    return {
      name: a.name,
      esm: estimate(x.map(coldOf)),
      cjs: estimate(y.map(coldOf)),
      importDiff: phase((s) => s.importMs),
      firstDiff: phase((s) => s.firstMs),
      coldDiff: phase(coldOf),
      coldCpuDiff: phase((s) => s.importCpuMs + s.firstCpuMs),
    };
  });
}

/** The cold request table: every variant's medians and ratios, the cold request's interval beside it. */
export function printColdRequests(rows: ColdRow[], runs: number, label: (name: string, format: string) => string): void {
  const functions = rows.filter((row) => row.name !== 'floor' && row.name !== 'lambdaFloor' && !row.compileCache);
  const floorRuns = runs * (functions.length / new Set(rows.map((row) => row.format)).size);
  table(
    `Cold request: a fresh process imports the bundle and serves its first invocation against an instant stand-in DynamoDB ` +
      `(median of ${runs} each, 90% interval of the cold request's median; the floors' of all ${floorRuns}, interleaved)`,
    ['bundle', 'import', 'first invocation', 'cold request', 'interval', 'x floor cold', 'first x floor first', 'cold CPU', 'x floor CPU'],
    rows.map((row) => [
      label(row.name in FLOOR_LABELS ? FLOOR_LABELS[row.name as FloorName] : `${row.name}${row.compileCache ? ' + compile cache (not deployed)' : ''}`, row.format),
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

/** CommonJS against ES module, bundle by bundle: both medians, and the paired differences with their intervals. */
export function printFormatComparison(formats: FormatComparison[]): void {
  if (formats.length === 0) return;
  table(
    `CommonJS against ES module, paired (each round ran both side by side; cjs - esm, median of the ${formats[0]!.coldDiff.n} per-round differences, 90% interval)`,
    ['bundle', 'esm cold request', 'cjs cold request', 'import', 'first invocation', 'cold request', 'cold CPU'],
    formats.map((row) => [
      row.name in FLOOR_LABELS ? FLOOR_LABELS[row.name as FloorName] : row.name,
      `${ms(row.esm.median)} (${interval(row.esm)})`,
      `${ms(row.cjs.median)} (${interval(row.cjs)})`,
      difference(row.importDiff),
      difference(row.firstDiff),
      difference(row.coldDiff),
      difference(row.coldCpuDiff),
    ]),
  );
}
