/**
 * The entry points' guard: on a Node older than 22 the process stops before any other module runs,
 * with one line on stderr saying what to do, and exit code 1. npm scripts preload it (`--import`,
 * before tsx, which cannot start where `npm ci` skipped the optional packages: esbuild's binary is
 * one too), and local/server.ts and every scripts/*.ts import it first, for a start outside npm.
 * Plain JavaScript, so it runs on a bare Node.
 * npm scripts run on the Node 22 of the platform's optional dependency (`node_modules/.bin/node`);
 * an older Node means that package is missing, or npm was bypassed. It judges the process, not the
 * import: the client's tests import local/server.ts on the host's Node (`npm run test:host-node`),
 * where the main module is vitest's, so nothing is refused there.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const REQUIRED_MAJOR = 22;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const INSTALL_NODE = `install Node ${REQUIRED_MAJOR} (nvm install, see .nvmrc)`;

/** The repository file the process was started with (`local/server.ts`), if it is one. */
function startedScript() {
  const entry = process.argv[1];
  if (entry === undefined || !existsSync(entry)) return undefined;
  const path = relative(realpathSync(ROOT), realpathSync(entry));
  const outside = path.startsWith('..') || path.split(sep).includes('node_modules');
  return outside ? undefined : path.split(sep).join('/');
}

/** Whether a lock entry's `os` or `cpu` (absent, one name or a list) admits `value`. */
const admits = (field, value) => field === undefined || [field].flat().includes(value);

/** The optional dependency of package-lock.json that ships `node` for this os and cpu. */
function nodePackageFor(platform, arch) {
  const { packages } = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  const found = Object.entries(packages).find(
    ([, entry]) => entry.optional && entry.bin?.node && admits(entry.os, platform) && admits(entry.cpu, arch),
  );
  return found?.[0].replace(/^node_modules\//, '');
}

/** The line that says why this Node will not do, and what to do. */
function node22Needed(script) {
  const platform = `${process.platform}-${process.arch}`;
  const needed = `Node ${REQUIRED_MAJOR} is needed (this is ${process.version})`;
  const shipped = nodePackageFor(process.platform, process.arch);
  if (shipped === undefined) {
    return `${needed} and no node-${platform} package exists for ${platform}: ${INSTALL_NODE} and run npm again`;
  }
  if (!existsSync(join(ROOT, 'node_modules', shipped, 'package.json'))) {
    return `${needed} and ${shipped}, its package for ${platform}, is not installed (npm ci --omit=optional skips it): run npm ci, or ${INSTALL_NODE}`;
  }
  // npm 10 links no `node` bin when several packages of the lock declare one (npm 11 links the installed one).
  const bin = join(ROOT, 'node_modules', '.bin', process.platform === 'win32' ? 'node.cmd' : 'node');
  if (!existsSync(bin)) {
    return `${needed} and npm did not link ${shipped} as node_modules/.bin/node (npm 10 does not; npm 11 does): run npm install -g npm@11 and npm ci again, or ${INSTALL_NODE}`;
  }
  return `${needed} to run ${script}: start it through npm (npm start, npm run <script>), which runs it on node_modules/.bin/node, or as node_modules/.bin/node --import tsx ${script}`;
}

const script = startedScript();
if (Number(process.versions.node.split('.')[0]) < REQUIRED_MAJOR && script !== undefined) {
  console.error(node22Needed(script));
  process.exit(1);
}
