/** The per-file floor of `npm run mutation` (tools/mutation/scores.ts), on small made-up reports. */
import { describe, expect, it } from 'vitest';
import { judge, scoreFiles, type MutationReport } from '../../../tools/mutation/scores.ts';

type Status = MutationReport['files'][string]['mutants'][number]['status'];
const mutants = (...statuses: Status[]) =>
  statuses.map((status, i) => ({
    mutatorName: 'ConditionalExpression',
    replacement: 'true',
    status,
    location: { start: { line: i + 1, column: 3 } },
  }));
const verdict = (files: MutationReport['files']) => judge(scoreFiles({ files }, '/repo'));

describe('mutation scores per file', () => {
  it('passes files at 90% and over, counting timeouts as detected and leaving errors and ignored out', () => {
    const { lines, ok } = verdict({
      'lib/a.ts': {
        mutants: mutants(...Array<Status>(8).fill('Killed'), 'Timeout', 'Survived', 'CompileError', 'Ignored'),
      },
      'lib/b.ts': { mutants: mutants('Killed') },
    });
    expect(ok).toBe(true);
    expect(lines).toEqual([
      'mutation lib/a.ts: 90% (9/10, 1 survived)',
      'mutation lib/b.ts: 100% (1/1, 0 survived)',
      '  survived lib/a.ts:10:3 ConditionalExpression -> true',
    ]);
  });

  it('fails a file below 90%, counting a mutant no test reached as survived', () => {
    const { lines, ok } = verdict({
      '/repo/lib/a.ts': { mutants: mutants(...Array<Status>(8).fill('Killed'), 'NoCoverage') },
    });
    expect(ok).toBe(false);
    expect(lines[0]).toBe('mutation lib/a.ts: 88.8% (8/9, 1 survived) BELOW 90%');
    expect(lines[1]).toBe('  survived lib/a.ts:9:3 ConditionalExpression (no coverage) -> true');
  });

  it('fails a file without mutants, and a report without files', () => {
    expect(
      verdict({ 'lib/a.ts': { mutants: mutants('Killed') }, 'lib/b.ts': { mutants: mutants('CompileError') } }),
    ).toMatchObject({
      ok: false,
      lines: ['mutation lib/a.ts: 100% (1/1, 0 survived)', 'mutation lib/b.ts: no mutants (0/0, 0 survived) BELOW 90%'],
    });
    expect(verdict({})).toEqual({ ok: false, lines: ['mutation: the report names no mutated file'] });
  });
});
