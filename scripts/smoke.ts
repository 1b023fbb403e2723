/** `npm run smoke -- --base <url> [--read-only]`: tools/smoke/smoke.ts against a deployed or local API. */
import '../local/requireNode22.mjs';
import { runSmokeCommand } from '../tools/smoke/smoke.ts';

await runSmokeCommand(process.argv.slice(2));
