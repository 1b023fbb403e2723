/**
 * `npm run invoke -- --stage <stage> <function> --event <file>`: one function of a synthesized
 * stage, invoked from its cdk.out asset as start:deployed runs it (./deployedApi.ts): its template
 * environment, its role enforced by its IAM gate, the stage's tables on an in-memory dynalite. The
 * result goes to stdout, the function's log (START, its lines, END, REPORT) to stderr, as `sam local
 * invoke` splits them.
 */
import { stackName } from '../../../infra/stages.ts';
import type { Stage } from '../../../lib/domain/stages.ts';
import { API_KEY_FORMAT, runKeys } from '../../keys/keys.ts';
import { startDeployedFunction, functionNamesOf, type DeployedFunctionRun } from './deployedApi.ts';
import { DEFAULT_OUTDIR, ensureCloudAssembly } from './freshAssembly.ts';
import type { InvokeOutcome } from './lambdaFunction.ts';

export interface DeployedInvocation {
  stage: Stage;
  /** The function's operation name (`listPets`), or its logical id. */
  name: string;
  event: unknown;
  /** Values for template parameters without a default (production's alarm e-mail). */
  parameters: Record<string, string>;
  outdir?: string;
  log?: (line: string) => void;
  /**
   * A bearer key the event carries (the sample events' `local-sample-key`). The stage's control
   * table starts empty, so a key is issued there as an operator would (`npm run keys -- create`)
   * and put in the event in its place; otherwise every invocation would be answered 401.
   */
  sampleKey?: string;
}

/** A function name the stage does not have; the message is one line for the user. */
export class UnknownFunctionError extends Error {}

export async function invokeDeployed(invocation: DeployedInvocation): Promise<InvokeOutcome> {
  const outdir = invocation.outdir ?? DEFAULT_OUTDIR;
  await ensureCloudAssembly(outdir);
  const options = {
    stackName: stackName(invocation.stage),
    outdir,
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
    const event = invocation.sampleKey ? await withIssuedKey(invocation, run) : invocation.event;
    return await run.deployed.host.invoke(event);
  } finally {
    await run.close();
  }
}

async function withIssuedKey(
  { stage, event, sampleKey, log }: DeployedInvocation,
  run: DeployedFunctionRun,
): Promise<unknown> {
  const text = JSON.stringify(event);
  if (!sampleKey || !text.includes(sampleKey)) return event;
  const lines: string[] = [];
  const code = await runKeys(
    [
      'create',
      '--stage',
      stage,
      '--table',
      run.controlTableName,
      '--endpoint',
      run.storeEndpoint,
      '--description',
      'npm run invoke',
    ],
    {
      out: (line) => lines.push(line),
      err: (line) => lines.push(line),
    },
  );
  const key = lines.map((line) => line.trim()).find((line) => API_KEY_FORMAT.test(line));
  if (code !== 0 || !key) throw new Error(`could not issue a key in ${run.controlTableName}: ${lines.join(' ')}`);
  (log ?? ((line: string) => void process.stderr.write(`${line}\n`)))(
    `invoke: the event's ${sampleKey} is replaced by a key issued in ${run.controlTableName} (npm run keys -- create)`,
  );
  return JSON.parse(text.replaceAll(sampleKey, key)) as unknown;
}

/** What Lambda's Invoke returns: the payload, or the function error's `{errorType, errorMessage}`. */
export function invokeResponse(outcome: InvokeOutcome): unknown {
  if (outcome.kind === 'ok') return outcome.payload;
  return {
    errorType: outcome.kind === 'timeout' ? 'Sandbox.Timedout' : outcome.errorType,
    errorMessage: outcome.errorMessage,
  };
}
