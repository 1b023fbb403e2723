/**
 * `npm run mutation [-- <stryker options>]`: runs Stryker (stryker.config.mjs; options such as
 * `--mutate lib/http/auth.ts` pass through), then holds every mutated file to the per-file floor
 * (tools/mutation/scores.ts). Exits non-zero when either fails. The old report is removed first,
 * so a Stryker that dies before reporting cannot be judged by a stale one.
 */
import '../local/requireNode22.mjs';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { REPORT_FILE, printScores } from '../tools/mutation/scores.ts';

rmSync(REPORT_FILE, { force: true });
function run(args: string[]): number {
  const { status, signal } = spawnSync(process.execPath, args, { stdio: 'inherit' });
  if (signal) console.error(`mutation: ${args.join(' ')} was ended by ${signal}`);
  return status ?? 1;
}
const stryker = run(['node_modules/@stryker-mutator/core/bin/stryker.js', 'run', ...process.argv.slice(2)]);
const scores = printScores();
process.exit(stryker !== 0 ? stryker : scores);
