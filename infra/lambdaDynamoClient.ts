/**
 * The DynamoDB client package as the Lambda bundles take it (esbuild aliases
 * `@aws-sdk/client-dynamodb` to the copy this module writes: `lambdaAliases` in infra/bundling.ts).
 *
 * The package registers each of DynamoDB's 35 modeled errors (a class and a schema) in its error
 * registry when it loads, so every bundle carries, compiles and runs all of them at import. That
 * is top-level code, which V8 compiles eagerly, at about four times the cost per byte of a
 * function body it only preparses. Only the errors the service tells apart by name need a class of
 * their own: for any error it has no registration for, the SDK throws the package's
 * `DynamoDBServiceException` with the error's name, message, fault and metadata, as it does for a
 * registered one (test/infra/lambdaDynamoClient.test.ts checks every error against the package as
 * published). So the copy is the package's `dist-es` as published, less the registrations of the
 * errors not in `REGISTERED_DYNAMODB_ERRORS` (esbuild then drops their classes and schemas as
 * unused), with a package.json of only what bundling reads. Bought: 10.5 kB of every bundle and
 * 1.3-2.0 ms of its import (docs/performance.md).
 *
 * The copy is written once per package version (and version of this file) under
 * node_modules/.cache, and a package that does not register its errors where this expects them
 * fails the build. `npm start`, the scripts and the tests run the sources with the package as
 * published.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The errors that keep their class: those the service's store code names (lib/store/dynamo.ts),
 * which test/infra/lambdaDynamoClient.test.ts keeps in step with lib/.
 */
export const REGISTERED_DYNAMODB_ERRORS: readonly string[] = [
  'ConditionalCheckFailedException',
  'InternalServerError',
  'LimitExceededException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'ResourceNotFoundException',
  'ThrottlingException',
];

const PACKAGE = '@aws-sdk/client-dynamodb';
const SCHEMAS = join('dist-es', 'schemas', 'schemas_0.js');
/** A registration of one of DynamoDB's own errors, one statement a line, as the package writes them. */
const REGISTRATION = /^n0_registry\.registerError\((\w+)\$, \1\);\n/gm;

/** The DynamoDB errors `schemas_0.js` registers, in its order. */
export const registeredDynamoErrors = (source: string): string[] => [...source.matchAll(REGISTRATION)].map(([, name]) => name!);

/** `schemas_0.js` without the registrations of errors not in `keep`; throws when any is not where it should be. */
export function withoutUnusedErrors(source: string, keep: readonly string[] = REGISTERED_DYNAMODB_ERRORS): string {
  const registered: string[] = [];
  const trimmed = source.replace(REGISTRATION, (statement, name: string) => {
    registered.push(name);
    return keep.includes(name) ? statement : '';
  });
  const missing = keep.filter((name) => !registered.includes(name));
  if (registered.length === 0 || missing.length > 0) {
    throw new Error(`${PACKAGE}'s ${SCHEMAS} does not register ${missing.join(', ') || 'its errors'} as infra/lambdaDynamoClient.ts expects: check the package's new version.`);
  }
  return trimmed;
}

/**
 * The entry module of the trimmed copy of the package installed under `nodeModules`, written if it
 * is not there yet (under a name of the package's version and this trim, so an update writes anew).
 */
export function lambdaDynamoClientEntry(nodeModules: string): string {
  const published = join(nodeModules, ...PACKAGE.split('/'));
  const manifest = JSON.parse(readFileSync(join(published, 'package.json'), 'utf8')) as Record<string, unknown>;
  const version = String(manifest.version);
  const trim = createHash('sha256').update(readFileSync(new URL(import.meta.url))).digest('hex').slice(0, 12);
  const copies = join(nodeModules, '.cache', 'petstore-lambda');
  const current = `${version}-${trim}`;
  // Under a node_modules of its own, so that its imports of other packages resolve as the package's do.
  const copy = join(copies, current, 'node_modules', ...PACKAGE.split('/'));
  const entry = join(copy, 'dist-es', 'index.js');
  if (!existsSync(entry)) {
    writeCopy(published, manifest, copy);
    // Copies of an earlier version or trim are never read again.
    for (const other of readdirSync(copies)) if (other !== current) rmSync(join(copies, other), { recursive: true, force: true });
  }
  return entry;
}

/**
 * The fields of the copy's package.json: what resolving and bundling it reads (its name, version,
 * entry point and `sideEffects: false`, which lets esbuild drop what is unused; of the entry points
 * only the ES one, as the copy holds `dist-es` alone). The client bundles the whole file to read its
 * `version`, so the published one's scripts and dependency lists (2.2 kB) stay out.
 */
const MANIFEST_FIELDS = ['name', 'version', 'license', 'sideEffects', 'module'];

/** Writes the copy beside its final place, then moves it there: builds running at once never see half of one. */
function writeCopy(published: string, manifest: Record<string, unknown>, copy: string): void {
  const partial = `${copy}.${process.pid}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  cpSync(join(published, 'LICENSE'), join(partial, 'LICENSE'));
  const fields = MANIFEST_FIELDS.filter((field) => field in manifest).map((field) => [field, manifest[field]]);
  writeFileSync(join(partial, 'package.json'), JSON.stringify(Object.fromEntries(fields), null, 2));
  cpSync(join(published, 'dist-es'), join(partial, 'dist-es'), { recursive: true });
  writeFileSync(join(partial, SCHEMAS), withoutUnusedErrors(readFileSync(join(published, SCHEMAS), 'utf8')));
  mkdirSync(dirname(copy), { recursive: true });
  try {
    renameSync(partial, copy);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    // Another build wrote it first: theirs is the same.
    if (!existsSync(join(copy, 'dist-es', 'index.js'))) throw error;
  }
}
