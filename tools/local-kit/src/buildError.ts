/**
 * The one line a failed esbuild build is reported by: its first error, with file, line and column
 * (`lib/http/responses.ts:44:15: Unexpected ";"`), and how many more there are. esbuild's own
 * message is several lines, the location on a line of its own.
 */
import type { BuildFailure } from 'esbuild';

export function firstBuildError(error: unknown): string {
  const errors = (error as Partial<BuildFailure> | undefined)?.errors;
  const first = errors?.[0];
  if (!first) return String((error as Error | undefined)?.message ?? error).split('\n')[0]!;
  const where = first.location ? `${first.location.file}:${first.location.line}:${first.location.column + 1}: ` : '';
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  return `${where}${first.text}${more}`;
}
