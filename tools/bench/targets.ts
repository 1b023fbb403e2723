/**
 * The targets the bench holds the functions to, as ratios, and its verdict on each: bytes, import
 * and cold request against the default floor's (from the same run), warm latency against the raw
 * DynamoDB call's.
 */
import type { ColdRow } from './cold.ts';
import { verdict } from './print.ts';
import type { SizeRow } from './sizes.ts';
import type { WarmRow } from './warm.ts';

export const TARGETS = {
  bytes: 0.7,
  importMedian: 0.75,
  coldRequest: 0.8,
  firstInvocation: 1.0,
  warmP50: 1.1,
  warmP99: 1.2,
} as const;

export type Met = Partial<Record<keyof typeof TARGETS, boolean>>;

const DEFAULT_FLOOR = "the default floor's";

/** Prints one verdict line per target under `title`; which were met. */
function verdicts(
  title: string,
  checks: [keyof typeof TARGETS, string, { name: string; value: number }[], string?][],
): Met {
  console.log(`\n${title}`);
  const met: Met = {};
  for (const [target, what, rows, noun] of checks) {
    const { line, met: ok } = verdict(what, TARGETS[target], noun ? "the raw call's" : DEFAULT_FLOOR, rows, noun);
    console.log(line);
    met[target] = ok;
  }
  return met;
}

export function sizeVerdicts(rows: SizeRow[]): Met {
  const name = (row: SizeRow) => row.name;
  return verdicts('Targets (against the default floor):', [
    ['bytes', 'bytes', rows.map((row) => ({ name: name(row), value: row.floor.bytesRatio }))],
    ['importMedian', 'import median', rows.map((row) => ({ name: name(row), value: row.floor.importRatio }))],
  ]);
}

export function coldVerdicts(rows: ColdRow[]): Met {
  const name = (row: ColdRow) => row.name;
  const functions = rows.filter((row) => row.name !== 'floor' && row.name !== 'lambdaFloor' && row.run === 'as built');
  return verdicts('Cold request targets:', [
    ['coldRequest', 'cold request', functions.map((row) => ({ name: name(row), value: row.coldRatio }))],
    ['firstInvocation', 'first invocation', functions.map((row) => ({ name: name(row), value: row.firstRatio }))],
  ]);
}

export function warmVerdicts(rows: WarmRow[]): Met {
  return verdicts('Warm targets (against the raw DynamoDB call):', [
    ['warmP50', 'handler p50', rows.map((row) => ({ name: row.case, value: row.p50Ratio })), 'case'],
    ['warmP99', 'handler p99', rows.map((row) => ({ name: row.case, value: row.p99Ratio })), 'case'],
  ]);
}
