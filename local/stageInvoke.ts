/**
 * `npm run invoke -- --stage <stage>`: a function of the synthesized stage run from its cdk.out
 * asset, as start:deployed runs it (the stage emulator's invokeDeployed, told of this app by
 * stageApp.ts). How a key is issued on the stage's empty control table is the caller's
 * (scripts/invoke.ts issues one as `npm run keys -- create` would).
 */
import {
  CloudAssemblyError,
  type DeployedFunctionRun,
  invokeDeployed,
  invokeResponse,
  LambdaHostError,
  SynthesisError,
  UnknownFunctionError,
} from '@petstore/stage-emulator/invoke';
import { LocalSetupError } from './environment.ts';
import { FunctionError, isAuthorizerEvent, type StageInvoker, UsageError } from './invoke.ts';
import { DEFAULT_OUTDIR, OFFLINE_PARAMETERS, STAGE_APP, STAGE_STACKS } from './stageApp.ts';

/** What the event becomes before it is sent, given the running stage (e.g. a key issued in its table). */
export type PrepareEvent = (stage: string, event: unknown, run: DeployedFunctionRun) => Promise<unknown>;

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

/** The stage invoker local/invoke.ts runs for --stage. */
export const stageInvoker =
  (prepareEvent?: PrepareEvent): StageInvoker =>
  async (stage, functionNames, event) => {
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
        ...(prepareEvent
          ? { prepareEvent: (sent: unknown, run: DeployedFunctionRun) => prepareEvent(stage, sent, run) }
          : {}),
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
