/**
 * `npm run invoke -- --stage <stage> <function> --event <file>`: the stage half of `npm run invoke`
 * (local/invoke.ts parses the command line and reads the event; scripts/invoke.ts joins the two).
 * The function runs from its cdk.out asset as start:deployed runs it (./invokeDeployed.ts).
 */
import { STAGES, isStage } from '../../../lib/domain/stages.ts';
import { LocalSetupError } from '../../../local/environment.ts';
import {
  FunctionError,
  SAMPLE_EVENT_API_KEY,
  UsageError,
  isAuthorizerEvent,
  type StageInvoker,
} from '../../../local/invoke.ts';
import { OFFLINE_PARAMETERS } from './cli.ts';
import { CloudAssemblyError } from './cloudAssembly.ts';
import { SynthesisError } from './freshAssembly.ts';
import { invokeDeployed, invokeResponse, UnknownFunctionError } from './invokeDeployed.ts';
import { LambdaHostError } from './lambdaFunction.ts';

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

export const invokeStage: StageInvoker = async (stage, functionNames, event) => {
  if (!isStage(stage)) throw new UsageError(`unknown stage "${stage}": the stages are ${STAGES.join(' and ')}.`);
  if (functionNames.length !== 1 || !event) throw new UsageError(`--stage takes one function and --event <file>.`);
  const parsedEvent = event();
  refuseWrongKind(functionNames[0]!, parsedEvent);
  try {
    const outcome = await invokeDeployed({
      stage,
      name: functionNames[0]!,
      event: parsedEvent,
      parameters: { ...OFFLINE_PARAMETERS },
      sampleKey: SAMPLE_EVENT_API_KEY,
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
