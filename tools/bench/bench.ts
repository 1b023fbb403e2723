/**
 * `npm run bench` (`-- --quick` for a fast, rougher run): every figure beside the floor's, from the
 * same run on the same machine, with its ratio and a verdict on each target. Figures only; nothing
 * here asserts a time.
 *
 * 1. Bytes (tools/bench/sizes.ts): each function bundled exactly as deployed, against two builds of
 *    the floor (tools/bench/floor.ts: one GetCommand through DynamoDBDocumentClient): the default
 *    floor, built the usual way (the targets are ratios to it), and the Lambda floor, built with the
 *    functions' own options (tools/bench/bundles.ts).
 * 2. Cold import (sizes.ts): a fresh Node process imports a bundle (what Lambda's init pays), with
 *    the functions' NODE_OPTIONS, after loading the built-ins Lambda's runtime has loaded
 *    (tools/bench/coldRequest.ts); both floors' imports are interleaved with every function's.
 * 3. Cold request (tools/bench/cold.ts): a fresh process imports a bundle and serves its first
 *    invocation against an instant stand-in DynamoDB (coldRequest.ts), interleaved with both
 *    floors' import + one GetCommand: import, first invocation, both, and their ratios to the
 *    default floor's. `--paired <dir>` times another build of each function (`npm run build` at
 *    another commit) beside this tree's and compares the two sample by sample: the paired run that
 *    decides whether a performance change ships (docs/performance.md).
 * 4. Warm (tools/bench/warm.ts): each handler in-process on dynalite, interleaved request by request
 *    with the raw DynamoDB call it makes; then the status index's read cost (tools/bench/readCost.ts).
 *
 * `--cold-only` stops after 3 (while iterating on the cold start). Writes tools/bench/results.json
 * (not committed). Targets and verdicts: tools/bench/targets.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLE_FILE, FUNCTION_NODE_OPTIONS, PROJECT_ROOT } from '../../infra/bundle/bundling.ts';
import { FUNCTION_MEMORY_MIB, benchSettings, type BenchSettings } from './args.ts';
import { buildAllBundles, bundleFileOf, type BuiltBundle, type BundleSet } from './bundles.ts';
import { measureColdRequests, printColdRequests, printPairedComparison } from './cold.ts';
import { STAND_IN_TABLES } from './coldRequest.ts';
import { measureReadCost, printReadCost } from './readCost.ts';
import { measureSizes, printSizes } from './sizes.ts';
import { TARGETS, coldVerdicts, sizeVerdicts, warmVerdicts } from './targets.ts';
import { measureWarm, printWarm } from './warm.ts';

export { BenchUsageError } from './args.ts';

const RESULTS_FILE = join(PROJECT_ROOT, 'tools', 'bench', 'results.json');

function printHeader(settings: BenchSettings, started: Date): void {
  const { launch, paired } = settings;
  console.log(
    `npm run bench${settings.given ? ` ${settings.given}` : ''}: Node ${process.version} ${process.platform}/${process.arch}, ${started.toISOString()}`,
  );
  console.log(
    `Timed processes: node ${launch.nodeArgs.length > 0 ? `${launch.nodeArgs.join(' ')} (Lambda's runtime, ${FUNCTION_MEMORY_MIB} MiB)` : 'without arguments'}, ` +
      `${launch.cpu === undefined ? `free to use all ${availableParallelism()} CPUs` : `confined to CPU ${launch.cpu}`}.`,
  );
  console.log(
    `Functions and Lambda floor as deployed (CommonJS, ${BUNDLE_FILE}); default floor an ES module${paired ? `; each function also as built in ${paired.dir}` : ''}.`,
  );
  console.log(
    `NODE_OPTIONS of the functions: ${FUNCTION_NODE_OPTIONS || '(none)'}. Targets: bytes <= ${TARGETS.bytes.toFixed(2)}x, import <= ` +
      `${TARGETS.importMedian.toFixed(2)}x, cold request <= ${TARGETS.coldRequest.toFixed(2)}x and first invocation <= ` +
      `${TARGETS.firstInvocation.toFixed(2)}x the default floor's; warm p50 <= ${TARGETS.warmP50.toFixed(2)}x, p99 <= ${TARGETS.warmP99.toFixed(2)}x the raw call's.`,
  );
}

/** Each bundle written to its own folder under `dir`, named as deployed (the default floor as an ES module). */
function writeBundles({ floor, lambdaFloor, functions }: BundleSet, dir: string): Map<BuiltBundle, string> {
  const files = new Map<BuiltBundle, string>();
  for (const bundle of [floor, lambdaFloor, ...functions]) {
    mkdirSync(join(dir, bundle.name));
    files.set(bundle, join(dir, bundle.name, bundleFileOf(bundle)));
    writeFileSync(files.get(bundle)!, bundle.code);
  }
  return files;
}

/** Runs the bench as `argv` asks (`npm run bench -- <argv>`); a `BenchUsageError` for a mistake in it, before any work. */
export async function runBench(argv: string[]): Promise<void> {
  const settings = benchSettings(argv);
  const started = new Date();
  printHeader(settings, started);
  const set = await buildAllBundles();
  const dir = mkdtempSync(join(tmpdir(), 'petstore-bench-'));
  try {
    const files = writeBundles(set, dir);
    const sizes = measureSizes(set, files, settings.coldImports, settings.launch);
    printSizes(sizes, settings.coldImports);
    const sizeMet = sizeVerdicts(sizes.functions);
    const cold = await measureColdRequests(set, files, settings.coldRequests, settings.launch, settings.paired?.files);
    printColdRequests(cold.rows, settings.coldRequests);
    const coldMet = coldVerdicts(cold.rows);
    printPairedComparison(cold.paired, settings.paired?.dir ?? '');
    const warm = settings.coldOnly ? [] : await measureWarm(settings.warmUp, settings.warmRequests);
    if (warm.length > 0) printWarm(warm, settings.warmUp, settings.warmRequests);
    const warmMet = warm.length > 0 ? warmVerdicts(warm) : {};
    const readCost = settings.coldOnly ? [] : await measureReadCost(settings.readCostPets);
    if (readCost.length > 0) printReadCost(readCost);
    const results = {
      date: started.toISOString(),
      node: process.version,
      platform: `${process.platform}/${process.arch}`,
      quick: settings.quick,
      paired: settings.paired?.dir,
      nodeOptions: FUNCTION_NODE_OPTIONS,
      launch: settings.launch,
      coldImports: settings.coldImports,
      warmRequests: settings.warmRequests,
      coldRequests: settings.coldRequests,
      targets: { ...TARGETS, met: { ...sizeMet, ...coldMet, ...warmMet } },
      floors: sizes.floors,
      bundles: sizes.functions,
      coldRequest: { standInTables: STAND_IN_TABLES, rows: cold.rows, paired: cold.paired },
      warm,
      statusIndexReadCost: readCost,
    };
    writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
    console.log('\nWritten to tools/bench/results.json.');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
