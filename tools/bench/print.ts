/** How the bench prints its figures: units, ratios, intervals and aligned tables. */
import type { Estimate } from './stats.ts';

export const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;
export const ms = (value: number) => `${value.toFixed(2)} ms`;
export const times = (value: number) => `${value.toFixed(3)}x`;
export const ratio = (value: number, floor: number) => times(value / floor);
/** A signed difference with its interval: `-1.20 ms (-2.10 to -0.40)`. */
export const difference = ({ median, low, high }: Estimate) =>
  `${signed(median)} ms (${signed(low)} to ${signed(high)})`;
/** A median's interval alone: `41.20-43.90`. */
export const interval = ({ low, high }: Estimate) => `${low.toFixed(2)}-${high.toFixed(2)}`;

const signed = (value: number) => `${value > 0 ? '+' : ''}${value.toFixed(2)}`;

/** A titled table: the first column left-aligned, the others right-aligned. */
export function table(title: string, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`\n${title}\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const row of rows) console.log(line(row));
}

/** One verdict line: met by every row (each a `noun`), or not met by the rows named, with every row's figure. */
export function verdict(
  what: string,
  limit: number,
  against: string,
  rows: { name: string; value: number }[],
  noun = 'function',
): { line: string; met: boolean } {
  const missed = rows.filter((row) => row.value > limit);
  const figures = rows.map((row) => `${row.name} ${times(row.value)}`).join(', ');
  const met = missed.length === 0 && rows.length > 0;
  const outcome = met
    ? `MET by every ${noun}`
    : rows.length === 0
      ? 'NOT MET: nothing measured'
      : `NOT MET by ${missed.map((row) => row.name).join(', ')}`;
  return { line: `  ${what} <= ${limit.toFixed(2)}x ${against}: ${outcome} (${figures})`, met };
}
