/**
 * The per-file floor of mutation testing: reads Stryker's JSON report (its `json` reporter) and
 * prints, per mutated file, `mutation <file>: <score>% (<detected>/<total>, <undetected> survived)`,
 * then every undetected mutant. Exits 1 when any file scores below
 * MIN_SCORE, when a file has no mutants (a check that cannot fail is not a check), or when the
 * report is missing or names no file. Stryker's own `break` threshold is on the overall score only.
 *
 * The score is Stryker's: killed and timed-out mutants over all valid ones (killed, timeout,
 * survived, no coverage); compile and runtime errors and ignored mutants count for nothing.
 * "Survived" here includes mutants no test even reached (NoCoverage): both went undetected.
 */
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';

const MIN_SCORE = 90;
/** Stryker's default jsonReporter.fileName, which stryker.config.mjs keeps. */
export const REPORT_FILE = 'reports/mutation/mutation.json';

type MutantStatus =
  | 'Killed'
  | 'Survived'
  | 'NoCoverage'
  | 'CompileError'
  | 'RuntimeError'
  | 'Timeout'
  | 'Ignored'
  | 'Pending';

interface Mutant {
  mutatorName: string;
  replacement?: string;
  status: MutantStatus;
  location: { start: { line: number; column: number } };
}

export interface MutationReport {
  files: Record<string, { mutants: Mutant[] }>;
}

export interface FileScore {
  file: string;
  /** Killed or timed out. */
  detected: number;
  /** Detected plus undetected; errors and ignored mutants left out. */
  total: number;
  /** Survived or not covered, as `line:column mutator -> replacement`. */
  undetected: string[];
  /** Percent, one decimal; NaN when the file has no valid mutant. */
  score: number;
}

const DETECTED: ReadonlySet<MutantStatus> = new Set(['Killed', 'Timeout']);
const UNDETECTED: ReadonlySet<MutantStatus> = new Set(['Survived', 'NoCoverage']);

export function scoreFiles(report: MutationReport, root = process.cwd()): FileScore[] {
  return Object.entries(report.files)
    .map(([name, { mutants }]) => {
      const file = relative(root, resolve(root, name));
      const detected = mutants.filter((m) => DETECTED.has(m.status)).length;
      const undetected = mutants.filter((m) => UNDETECTED.has(m.status)).map((m) => describeMutant(m));
      const total = detected + undetected.length;
      const score = total === 0 ? Number.NaN : Math.floor((detected / total) * 1000) / 10;
      return { file, detected, total, undetected, score };
    })
    .sort((a, b) => a.file.localeCompare(b.file));
}

function describeMutant(m: Mutant): string {
  const { line, column } = m.location.start;
  const replacement = (m.replacement ?? '').replace(/\s+/g, ' ');
  return `${line}:${column} ${m.mutatorName}${m.status === 'NoCoverage' ? ' (no coverage)' : ''} -> ${replacement}`;
}

/** The lines to print and whether the floor holds. */
export function judge(scores: readonly FileScore[]): { lines: string[]; ok: boolean } {
  const lines: string[] = [];
  let ok = scores.length > 0;
  if (!ok) lines.push('mutation: the report names no mutated file');
  for (const s of scores) {
    const passes = s.total > 0 && s.score >= MIN_SCORE;
    ok &&= passes;
    const score = s.total === 0 ? 'no mutants' : `${s.score}%`;
    lines.push(
      `mutation ${s.file}: ${score} (${s.detected}/${s.total}, ${s.undetected.length} survived)${passes ? '' : ` BELOW ${MIN_SCORE}%`}`,
    );
  }
  for (const s of scores) for (const mutant of s.undetected) lines.push(`  survived ${s.file}:${mutant}`);
  return { lines, ok };
}

/** Prints one line per mutated file from Stryker's JSON report; resolves to the exit code. */
export function printScores(): number {
  let report: MutationReport;
  try {
    report = JSON.parse(readFileSync(REPORT_FILE, 'utf8')) as MutationReport;
  } catch (error) {
    console.error(`mutation: cannot read ${REPORT_FILE}: ${(error as Error).message}`);
    return 1;
  }
  const { lines, ok } = judge(scoreFiles(report));
  for (const line of lines) console.log(line);
  return ok ? 0 : 1;
}
