/** `npm run start:deployed -- --stage <stage>`: a synthesized stage served offline as deployed (tools/stage-emulator). */
import '../local/requireNode22.mjs';
import { runStartDeployedCommand } from '../tools/stage-emulator/src/cli.ts';

await runStartDeployedCommand(process.argv.slice(2));
