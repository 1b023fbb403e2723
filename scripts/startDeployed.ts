/**
 * `npm run start:deployed -- --stage <stage>`: a synthesized stage served offline as deployed
 * (tools/stage-emulator), told of this app by local/stageApp.ts.
 */
import '../local/requireNode22.mjs';
import { CONTROL_TABLE_OUTPUT } from '../infra/names.ts';
import {
  DEFAULT_INSPECTED,
  DEFAULT_OUTDIR,
  EDGE_ERRORS,
  OFFLINE_PARAMETERS,
  STAGE_APP,
  STAGE_STACKS,
} from '../local/stageApp.ts';
import { runStartDeployedCommand } from '@petstore/stage-emulator/cli';

await runStartDeployedCommand(process.argv.slice(2), {
  app: STAGE_APP,
  stacks: STAGE_STACKS,
  outdir: DEFAULT_OUTDIR,
  offlineParameters: OFFLINE_PARAMETERS,
  defaultInspected: DEFAULT_INSPECTED,
  edgeErrors: EDGE_ERRORS,
  nextSteps: (stage, api) => [
    'No API key exists yet. Issue one as an operator would after a deploy:',
    `  npm run keys -- create --stage ${stage} --table ${api.output(CONTROL_TABLE_OUTPUT)} --endpoint ${api.storeEndpoint}`,
    'Then, for example:',
    `  PETSTORE_API_KEY=<the key> npm run smoke -- --base ${api.url}`,
  ],
});
