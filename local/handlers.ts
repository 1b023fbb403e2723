/** Loads the very handler modules that are deployed, by the entries of the shared route list. */
import type { Handler } from 'aws-lambda';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import type { Route } from '../lib/domain/routes.ts';
import { dependenciesFromEnvironment, type Environment, type Dependencies } from '../lib/service.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** What a function module exports: its handler, and the factory that made it from a service. */
interface FunctionModule {
  handler?: Handler;
  createHandler?: (dependencies: Dependencies) => Handler;
}

/**
 * Imports a route's handler module with `env` as its configuration (the module reads process.env
 * when first loaded, exactly as on Lambda, so `env` goes there first), and makes its handler with
 * the module's own factory from the service `env` composes: each local API started in one process
 * (tests start several) gets handlers on its own store, where the module's `handler` export is
 * bound to the first. `overrides` (tests only: ids that collide on purpose) replace parts of it.
 * The `handler` export itself runs as deployed under `npm run start:deployed`.
 */
export async function loadHandler(
  route: Route,
  env: Environment,
  overrides: Partial<Dependencies> = {},
): Promise<Handler> {
  Object.assign(process.env, env);
  const module = (await import(pathToFileURL(resolve(ROOT, route.entry)).href)) as FunctionModule;
  if (typeof module.createHandler !== 'function') throw new Error(`${route.entry} does not export createHandler`);
  return module.createHandler({ ...dependenciesFromEnvironment(env), ...overrides });
}
