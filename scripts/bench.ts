/** `npm run bench`: the functions' size and speed against floors built in the same run (tools/bench/bench.ts). */
import '../local/requireNode22.mjs';
import { BenchUsageError, runBench } from '../tools/bench/bench.ts';

try {
  await runBench(process.argv.slice(2));
} catch (error) {
  // A mistake in the arguments is one line and exit 2; a run that fails says why, without a stack.
  console.error(`npm run bench: ${(error as Error).message}`);
  process.exit(error instanceof BenchUsageError ? 2 : 1);
}
