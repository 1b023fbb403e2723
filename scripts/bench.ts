/** `npm run bench`: the functions' size and speed against floors built in the same run (tools/bench/bench.ts). */
import '../tools/bench/bench.ts';
