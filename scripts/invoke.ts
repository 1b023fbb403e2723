/**
 * `npm run invoke -- <operation> --event <file>` runs a handler on the local store (local/invoke.ts);
 * with `--stage <stage>`, a function of the synthesized stage from its cdk.out asset, as start:deployed
 * runs it (the stage emulator's invokeDeployed, told of this app by local/stageApp.ts).
 */
import '../local/requireNode22.mjs';
import { CONTROL_TABLE_OUTPUT } from '../infra/names.ts';
import { runInvokeCommand, SAMPLE_EVENT_API_KEY } from '../local/invoke.ts';
import { stageInvoker } from '../local/stageInvoke.ts';
import { API_KEY_FORMAT, runKeys } from '../tools/keys/keys.ts';
import type { DeployedFunctionRun } from '@petstore/stage-emulator/invoke';

/**
 * The sample events carry a bearer key (`local-sample-key`). The stage's control table starts
 * empty, so a key is issued there as an operator would (`npm run keys -- create`) and put in the
 * event in its place; otherwise every invocation would be answered 401.
 */
async function withIssuedKey(stage: string, event: unknown, run: DeployedFunctionRun): Promise<unknown> {
  const text = JSON.stringify(event);
  if (!text.includes(SAMPLE_EVENT_API_KEY)) return event;
  const table = run.output(CONTROL_TABLE_OUTPUT);
  const lines: string[] = [];
  const code = await runKeys(
    ['create', '--stage', stage, '--table', table, '--endpoint', run.storeEndpoint, '--description', 'npm run invoke'],
    {
      out: (line) => lines.push(line),
      err: (line) => lines.push(line),
    },
  );
  const key = lines.map((line) => line.trim()).find((line) => API_KEY_FORMAT.test(line));
  if (code !== 0 || !key) throw new Error(`could not issue a key in ${table}: ${lines.join(' ')}`);
  process.stderr.write(
    `invoke: the event's ${SAMPLE_EVENT_API_KEY} is replaced by a key issued in ${table} (npm run keys -- create)\n`,
  );
  return JSON.parse(text.replaceAll(SAMPLE_EVENT_API_KEY, key)) as unknown;
}

await runInvokeCommand(process.argv.slice(2), stageInvoker(withIssuedKey));
