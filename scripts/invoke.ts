/**
 * `npm run invoke -- <operation> --event <file>` runs a handler on the local store (local/invoke.ts);
 * with `--stage <stage>`, a function of the synthesized stage from its cdk.out asset, as start:deployed
 * runs it (the stage emulator's invokeDeployed, told of this app by local/stageApp.ts).
 */
import '../local/requireNode22.mjs';
import { CONTROL_TABLE_OUTPUT } from '../infra/names.ts';
import { LocalSetupError } from '../local/environment.ts';
import {
  FunctionError,
  SAMPLE_EVENT_API_KEY,
  UsageError,
  isAuthorizerEvent,
  runInvokeCommand,
  type StageInvoker,
} from '../local/invoke.ts';
import { DEFAULT_OUTDIR, OFFLINE_PARAMETERS, STAGE_APP, STAGE_STACKS } from '../local/stageApp.ts';
import { API_KEY_FORMAT, runKeys } from '../tools/keys/keys.ts';
import {
  CloudAssemblyError,
  type DeployedFunctionRun,
  invokeDeployed,
  invokeResponse,
  LambdaHostError,
  SynthesisError,
  UnknownFunctionError,
} from '@petstore/stage-emulator/invoke';

/** The event's kind must be the function's: the authorizer takes events/authorizer.json, an operation its proxy event. */
function refuseWrongKind(name: string, event: unknown): void {
  const wantsAuthorizerEvent = name.toLowerCase() === 'authorizer' || /Authorizer/.test(name);
  if (wantsAuthorizerEvent === isAuthorizerEvent(event)) return;
  throw new UsageError(
    wantsAuthorizerEvent
      ? `${name} takes an API Gateway REQUEST authorizer event (type REQUEST, methodArn; e.g. events/authorizer.json), not a proxy event.`
      : `${name} takes an API Gateway proxy event (e.g. events/${name}.json), not a REQUEST authorizer event.`,
  );
}

const invokeStage: StageInvoker = async (stage, functionNames, event) => {
  const stages = Object.keys(STAGE_STACKS);
  if (!Object.hasOwn(STAGE_STACKS, stage))
    throw new UsageError(`unknown stage "${stage}": the stages are ${stages.join(' and ')}.`);
  if (functionNames.length !== 1 || !event) throw new UsageError(`--stage takes one function and --event <file>.`);
  const parsedEvent = event();
  refuseWrongKind(functionNames[0]!, parsedEvent);
  try {
    const outcome = await invokeDeployed({
      stackName: STAGE_STACKS[stage]!,
      name: functionNames[0]!,
      event: parsedEvent,
      parameters: { ...OFFLINE_PARAMETERS },
      outdir: DEFAULT_OUTDIR,
      app: STAGE_APP,
      prepareEvent: (sent, run) => withIssuedKey(stage, sent, run),
    });
    if (outcome.kind !== 'ok') throw new FunctionError(invokeResponse(outcome));
    return outcome.payload;
  } catch (error) {
    if (error instanceof UnknownFunctionError) throw new UsageError(error.message);
    if ([CloudAssemblyError, SynthesisError, LambdaHostError].some((kind) => error instanceof kind))
      throw new LocalSetupError((error as Error).message);
    throw error;
  }
};

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

await runInvokeCommand(process.argv.slice(2), invokeStage);
