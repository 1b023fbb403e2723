/** Loads the very handler modules that are deployed, by the entries of the shared route list. */
import type { Handler } from 'aws-lambda';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import type { Route } from '../lib/domain/routes.ts';
import type { Environment } from '../lib/service.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Imports a route's handler with `env` as its configuration: the module reads process.env when
 * first loaded, exactly as on Lambda, so `env` goes there first.
 */
export async function loadHandler(route: Route, env: Environment): Promise<Handler> {
  Object.assign(process.env, env);
  const module = (await import(pathToFileURL(resolve(ROOT, route.entry)).href)) as { handler?: Handler };
  if (typeof module.handler !== 'function') throw new Error(`${route.entry} does not export a handler`);
  return module.handler;
}
