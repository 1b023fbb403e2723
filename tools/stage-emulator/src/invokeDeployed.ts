/**
 * `npm run invoke -- --stage <stage> <function> --event <file>`: one function of a synthesized
 * stage, invoked from its cdk.out asset as start:deployed runs it (./deployedApi.ts): its template
 * environment, its role enforced by its IAM gate, the stage's tables on an in-memory dynalite. The
 * result goes to stdout, the function's log (START, its lines, END, REPORT) to stderr, as `sam local
 * invoke` splits them.
 */
import { startDeployedFunction, functionNamesOf, type DeployedFunctionRun } from './deployedApi.ts';
import { ensureCloudAssembly } from './freshAssembly.ts';
import type { InvokeOutcome } from './lambdaFunction.ts';
import type { StageApp } from './stageApp.ts';

// The refusals an invocation can end in, for the caller to tell a setup mistake from a function's failure.
export { CloudAssemblyError } from './cloudAssembly.ts';
export { SynthesisError } from './freshAssembly.ts';
export { LambdaHostError } from './lambdaFunction.ts';
export type { DeployedFunctionRun };

export interface DeployedInvocation {
  /** The stack whose function runs, e.g. `PetStore-staging`. */
  stackName: string;
  /** The function's operation name (`listPets`), or its logical id. */
  name: string;
  event: unknown;
  /** Values for template parameters without a default (production's alarm e-mail). */
  parameters: Record<string, string>;
  /** The cloud assembly, synthesized from `app` first when it is not fresh. */
  outdir: string;
  app: StageApp;
  log?: (line: string) => void;
  /**
   * The event as it is sent, given the function running with the stage's store (a caller puts a
   * key it issued in the stage's tables in place of a sample one); default: as given.
   */
  prepareEvent?(event: unknown, run: DeployedFunctionRun): Promise<unknown>;
}

/** A function name the stage does not have; the message is one line for the user. */
export class UnknownFunctionError extends Error {}

export async function invokeDeployed(invocation: DeployedInvocation): Promise<InvokeOutcome> {
  const { outdir, app } = invocation;
  await ensureCloudAssembly(outdir, app);
  const options = {
    stackName: invocation.stackName,
    outdir,
    app,
    parameters: invocation.parameters,
    log: invocation.log ?? ((line: string) => void process.stderr.write(`${line}\n`)),
    report: () => undefined,
  };
  const run = await startDeployedFunction({ ...options, name: invocation.name });
  if (!run) {
    throw new UnknownFunctionError(
      `${options.stackName} has no function "${invocation.name}": its functions are ${functionNamesOf(options).join(', ')}.`,
    );
  }
  try {
    const event = invocation.prepareEvent ? await invocation.prepareEvent(invocation.event, run) : invocation.event;
    return await run.deployed.host.invoke(event);
  } finally {
    await run.close();
  }
}

/** What Lambda's Invoke returns: the payload, or the function error's `{errorType, errorMessage}`. */
export function invokeResponse(outcome: InvokeOutcome): unknown {
  if (outcome.kind === 'ok') return outcome.payload;
  return {
    errorType: outcome.kind === 'timeout' ? 'Sandbox.Timedout' : outcome.errorType,
    errorMessage: outcome.errorMessage,
  };
}
