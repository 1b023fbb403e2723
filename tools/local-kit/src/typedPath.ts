/** A path typed on the command line of an npm script, read from the folder it was typed in. */
import { resolve } from 'node:path';

/**
 * `path` read from the folder the command was typed in. npm runs a script from the package's folder
 * and names the folder it was typed in INIT_CWD; a process npm did not start for `script` (INIT_CWD
 * inherited from an outer `npm test`, or no npm at all) reads from its own working folder.
 */
export function typedPath(path: string, script: string, env: NodeJS.ProcessEnv = process.env): string {
  const typedIn = env.npm_lifecycle_event === script && env.INIT_CWD ? env.INIT_CWD : process.cwd();
  return resolve(typedIn, path);
}
