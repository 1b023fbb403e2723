/**
 * SAM-style invocation: `npm run invoke -- <operation> --event <file> [--path name=value]`.
 * Runs one deployed handler module on an event file (the JSON `sam local invoke -e` takes)
 * against the local store, and prints the Lambda result.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { setRequestLogWriter } from '../lib/requestLog.ts';
import { routes } from '../lib/routes.ts';
import { prepareLocalEnvironment } from './environment.ts';
import { isEntryPoint } from './entryPoint.ts';
import { loadHandler } from './handlers.ts';
import { localContext } from './proxyEvent.ts';

/** The key the sample events in events/ carry; trusted only when PETSTORE_API_KEYS is unset. */
export const SAMPLE_EVENT_API_KEY = 'local-sample-key';

const USAGE = `Usage: npm run invoke -- <${routes.map((r) => r.operation).join('|')}> --event <file> [--path name=value]`;

export async function invoke(argv: string[]): Promise<unknown> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { event: { type: 'string', short: 'e' }, path: { type: 'string', multiple: true } },
  });
  const route = routes.find((r) => r.operation === positionals[0]);
  if (!route || !values.event) throw new UsageError(USAGE);
  const event = JSON.parse(readFileSync(values.event, 'utf8')) as APIGatewayProxyEvent;
  for (const assignment of values.path ?? []) {
    const [name, value] = assignment.split('=', 2);
    if (!name || value === undefined) throw new UsageError(`--path takes name=value, not ${assignment}`);
    event.pathParameters = { ...event.pathParameters, [name]: value };
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

class UsageError extends Error {}

async function main(): Promise<void> {
  try {
    console.log(JSON.stringify(await invoke(process.argv.slice(2)), null, 2));
  } catch (error) {
    console.error(error instanceof UsageError ? error.message : error);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  }
}

if (isEntryPoint(import.meta.url)) await main();
