/**
 * SAM-style invocation: `npm run invoke -- <operation> --event <file> [--path name=value]`.
 * Runs one deployed handler module on an event file (the JSON `sam local invoke -e` takes)
 * against the local store, and prints the Lambda result. With `--stage <stage>`, the invoker the
 * caller passes runs the function from the stage's cdk.out asset instead (scripts/invoke.ts passes
 * one built on the stage emulator's invokeDeployed; local/ never imports the emulator).
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { setRequestLogWriter } from '../lib/http/requestLog.ts';
import { routes } from '../lib/domain/routes.ts';
import { LocalSetupError, prepareLocalEnvironment } from './environment.ts';
import { loadHandler } from './handlers.ts';
import { localContext } from '@petstore/local-kit/proxyEvent';
import { typedPath } from '@petstore/local-kit/typedPath';
import { STAGES } from '../lib/domain/stages.ts';

/**
 * The address an event without `requestContext.domainName` is given, as API Gateway always gives one:
 * the local API's (`npm start`, port PORT or 3000), so every `Link` the handlers build is absolute.
 */
const localDomainName = (env: NodeJS.ProcessEnv = process.env): string => `127.0.0.1:${env.PORT || 3000}`;

/** The key the sample events in events/ carry; trusted only when PETSTORE_API_KEYS is unset. */
export const SAMPLE_EVENT_API_KEY = 'local-sample-key';

const USAGE =
  `Usage: npm run invoke -- <${routes.map((r) => r.operation).join('|')}> --event <file> [--path name=value]\n` +
  `       npm run invoke -- --stage <${STAGES.join('|')}> <function> --event <file> [--path name=value]`;

/** A REQUEST authorizer's event names the method it guards (`methodArn`); an operation's proxy event does not. */
export const isAuthorizerEvent = (event: unknown): boolean =>
  typeof event === 'object' &&
  event !== null &&
  (event as { type?: unknown }).type === 'REQUEST' &&
  typeof (event as { methodArn?: unknown }).methodArn === 'string';

/** A function's error, as Lambda's Invoke answers it: its `{errorType, errorMessage}` goes to stdout, exit 1. */
export class FunctionError {
  constructor(readonly response: unknown) {}
}

/** Runs one function of a synthesized stage on an event (`--stage`); its mistakes are UsageError or LocalSetupError. */
export type StageInvoker = (
  stage: string,
  functionNames: string[],
  event: (() => APIGatewayProxyEvent) | undefined,
) => Promise<unknown>;

export async function invoke(argv: string[], invokeStage?: StageInvoker): Promise<unknown> {
  const { positionals, values } = parseArguments(argv);
  if (values.help) return new HelpRequest();
  if (values.stage !== undefined) {
    if (!invokeStage) throw new UsageError('--stage is not available here.');
    const file = values.event;
    return invokeStage(values.stage, positionals, file === undefined ? undefined : () => eventOf(file, values.path));
  }
  const [name] = positionals;
  const route = routes.find((r) => r.operation === name);
  if (name !== undefined && !route)
    throw new UsageError(`unknown function ${name}; the functions are ${routes.map((r) => r.operation).join(', ')}.`);
  if (!route || !values.event) throw new UsageError(USAGE);
  const event = eventOf(values.event, values.path);
  if (isAuthorizerEvent(event)) {
    throw new UsageError(
      `${route.operation} takes an API Gateway proxy event (e.g. events/${route.operation}.json), not a REQUEST authorizer event; the authorizer runs with --stage.`,
    );
  }

  // As `sam local invoke` does: the function's log on stderr, its result alone on stdout.
  setRequestLogWriter((line) => console.error(line));
  const local = await prepareLocalEnvironment({
    ...process.env,
    PETSTORE_API_KEYS: process.env.PETSTORE_API_KEYS ?? SAMPLE_EVENT_API_KEY,
  });
  try {
    const handler = await loadHandler(route, local.env);
    return await handler(event, localContext(route.operation), () => undefined);
  } finally {
    await local.close();
  }
}

/** The event file with its `--path` values, and a domain name as API Gateway always gives one. */
function eventOf(file: string, paths: string[] = []): APIGatewayProxyEvent {
  const event = readEvent(file);
  for (const assignment of paths) {
    const [name, value] = assignment.split('=', 2);
    if (!name || value === undefined) throw new UsageError(`--path takes name=value, not ${assignment}`);
    event.pathParameters = { ...event.pathParameters, [name]: value };
  }
  event.requestContext = { ...event.requestContext, domainName: event.requestContext?.domainName || localDomainName() };
  return event;
}

function parseArguments(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        event: { type: 'string', short: 'e' },
        path: { type: 'string', multiple: true },
        stage: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
}

function readEvent(file: string): APIGatewayProxyEvent {
  let text: string;
  try {
    // From the folder the command was typed in (`cd events && npm run invoke -- listPets --event listPets.json`).
    text = readFileSync(typedPath(file, 'invoke'), 'utf8');
  } catch (error) {
    throw new UsageError(
      `Cannot read the event file ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)}).`,
    );
  }
  try {
    return JSON.parse(text) as APIGatewayProxyEvent;
  } catch {
    throw new UsageError(`The event file ${file} is not JSON.`);
  }
}

export class UsageError extends Error {}
class HelpRequest {}

/** `npm run invoke`'s command line: the result on stdout, its mistakes in one line on stderr. */
export async function runInvokeCommand(argv: string[], invokeStage?: StageInvoker): Promise<void> {
  try {
    const result = await invoke(argv, invokeStage);
    if (result instanceof HelpRequest) return console.log(USAGE);
    console.log(JSON.stringify(result, null, 2));
  } catch (error) {
    if (error instanceof FunctionError) {
      console.log(JSON.stringify(error.response, null, 2));
      process.exitCode = 1;
      return;
    }
    // A usage mistake or a local setting it cannot use (a cursor secret too short, a broken store): its line only.
    console.error(error instanceof UsageError || error instanceof LocalSetupError ? error.message : error);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  }
}
