/**
 * `npm run invoke -- <operation> --event <file>` runs a handler on the local store (local/invoke.ts);
 * with `--stage <stage>`, a function of the synthesized stage from its cdk.out asset (the stage emulator).
 */
import '../local/requireNode22.mjs';
import { runInvokeCommand } from '../local/invoke.ts';
import { invokeStage } from '../tools/stage-emulator/src/invokeStage.ts';

await runInvokeCommand(process.argv.slice(2), invokeStage);
