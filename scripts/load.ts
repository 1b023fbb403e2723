/** `npm run load [-- --scenario index-throttle]`: the local API under load beside a bare server (tools/load/load.ts). */
import '../local/requireNode22.mjs';
import { runLoad } from '../tools/load/load.ts';

await runLoad(process.argv.slice(2));
