/**
 * Bytes and cold import: each bundle's size against both floors', and the time a fresh Node process
 * takes to import it (what Lambda's init pays), each import interleaved with both floors', the
 * order rotated run by run.
 */
import { execFileSync } from 'node:child_process';
import { FUNCTION_NODE_OPTIONS } from '../../infra/bundle/bundling.ts';
import { FLOOR_LABELS, beyondFloor, type BuiltBundle, type BundleSet, type FloorName } from './bundles.ts';
import {
  checkLaunch,
  launchReport,
  lambdaRuntimePrelude,
  loadHandlerModule,
  nodeCommand,
  type LaunchReport,
  type ProcessLaunch,
} from './coldRequest.ts';
import { kb, ms, ratio, table, times } from './print.ts';
import { median } from './stats.ts';

/** A bundle's figures beside one floor's, from the same run. */
interface AgainstFloor {
  bytes: number;
  importMedianMs: number;
  bytesRatio: number;
  importRatio: number;
}

export interface SizeRow {
  name: string;
  bytes: number;
  importMedianMs: number;
  /** Against the default floor (the targets) and the Lambda floor (what the function itself adds). */
  floor: AgainstFloor;
  lambdaFloor: AgainstFloor;
  /** Bytes per source beyond the Lambda floor, the largest first. */
  beyondFloor: [string, number][];
}

interface FloorRow {
  name: FloorName;
  label: string;
  bytes: number;
  /** Median of every import of this floor in the run (each interleaved with a function's). */
  importMedianMs: number;
}

export interface Sizes {
  floors: FloorRow[];
  functions: SizeRow[];
}

/**
 * Milliseconds a fresh Node process takes to import `file`, measured inside that process, after the
 * built-ins Lambda's runtime has loaded (tools/bench/coldRequest.ts, `lambdaRuntimePrelude`).
 */
function coldImport(file: string, launch: ProcessLaunch): number {
  const script =
    `${lambdaRuntimePrelude}\nconst t = process.hrtime.bigint(); ${loadHandlerModule(file)}; const ms = Number(process.hrtime.bigint() - t) / 1e6;\n` +
    `process.stdout.write(JSON.stringify({ ms, ...${launchReport} }));`;
  const env = {
    PATH: process.env.PATH ?? '',
    NODE_OPTIONS: FUNCTION_NODE_OPTIONS,
    NODE_NO_WARNINGS: '1',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    TABLE_NAME: 'pets',
    CONTROL_TABLE_NAME: 'petstore-control',
  };
  const [command, args] = nodeCommand(launch, ['--input-type=module', '-e', script]);
  const { ms: importMs, ...seen } = JSON.parse(
    execFileSync(command, args, { env, encoding: 'utf8' }),
  ) as LaunchReport & { ms: number };
  checkLaunch(file, launch, seen);
  return importMs;
}

const against = (bytes: number, importMedianMs: number, floor: BuiltBundle, floorTimes: number[]): AgainstFloor => {
  const floorImportMedianMs = median(floorTimes);
  return {
    bytes: floor.bytes,
    importMedianMs: floorImportMedianMs,
    bytesRatio: bytes / floor.bytes,
    importRatio: importMedianMs / floorImportMedianMs,
  };
};

/** Every function's imports beside both floors', `runs` times, in a rotating order. */
export function measureSizes(
  { floor, lambdaFloor, functions }: BundleSet,
  files: Map<BuiltBundle, string>,
  runs: number,
  launch: ProcessLaunch,
): Sizes {
  // Per function: its own import times and both floors' beside it.
  const importTimes = new Map(
    functions.map((bundle) => [bundle, new Map([bundle, floor, lambdaFloor].map((each) => [each, [] as number[]]))]),
  );
  for (let run = 0; run < runs; run++) {
    for (const bundle of functions) {
      const order = [bundle, floor, lambdaFloor];
      for (let i = 0; i < order.length; i++) {
        const next = order[(run + i) % order.length]!;
        importTimes
          .get(bundle)!
          .get(next)!
          .push(coldImport(files.get(next)!, launch));
      }
    }
  }
  const allOf = (built: BuiltBundle) => [...importTimes.values()].flatMap((samples) => samples.get(built)!);
  const floors = [floor, lambdaFloor].map((built): FloorRow => {
    const name = built.name as FloorName;
    return { name, label: FLOOR_LABELS[name], bytes: built.bytes, importMedianMs: median(allOf(built)) };
  });
  const rows = functions.map((bundle): SizeRow => {
    const samples = importTimes.get(bundle)!;
    const importMedianMs = median(samples.get(bundle)!);
    return {
      name: bundle.name,
      bytes: bundle.bytes,
      importMedianMs,
      floor: against(bundle.bytes, importMedianMs, floor, samples.get(floor)!),
      lambdaFloor: against(bundle.bytes, importMedianMs, lambdaFloor, samples.get(lambdaFloor)!),
      beyondFloor: beyondFloor(bundle, lambdaFloor).slice(0, 6),
    };
  });
  return { floors, functions: rows };
}

/** The floors' and the functions' tables, and what each function adds beyond the Lambda floor. */
export function printSizes({ floors, functions }: Sizes, runs: number): void {
  const [base] = floors;
  table(
    `Floors (tools/bench/floor.ts, one GetCommand; import: median of its ${runs * functions.length} fresh processes in this run)`,
    ['floor', 'bytes', 'ratio', 'import', 'ratio'],
    floors.map((row) => [
      row.label,
      kb(row.bytes),
      ratio(row.bytes, base!.bytes),
      ms(row.importMedianMs),
      ratio(row.importMedianMs, base!.importMedianMs),
    ]),
  );
  table(
    `Bundles and cold import (median of ${runs} fresh processes each, interleaved with as many of each floor's)`,
    [
      'function',
      'bytes',
      'floor',
      'ratio',
      'Lambda floor',
      'ratio',
      'import',
      'floor',
      'ratio',
      'Lambda floor',
      'ratio',
    ],
    functions.map((row) => [
      row.name,
      kb(row.bytes),
      kb(row.floor.bytes),
      times(row.floor.bytesRatio),
      kb(row.lambdaFloor.bytes),
      times(row.lambdaFloor.bytesRatio),
      ms(row.importMedianMs),
      ms(row.floor.importMedianMs),
      times(row.floor.importRatio),
      ms(row.lambdaFloor.importMedianMs),
      times(row.lambdaFloor.importRatio),
    ]),
  );
  console.log('\nBeyond the Lambda floor (bytes each source adds):');
  for (const row of functions)
    console.log(`  ${row.name}: ${row.beyondFloor.map(([source, bytes]) => `${source} +${bytes}`).join(', ')}`);
}
